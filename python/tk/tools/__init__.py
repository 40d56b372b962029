"""Host-side helpers, as Triton's triton.tools."""
