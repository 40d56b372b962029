"""Names other files alias at module level: libdevice under another name
(as libraries pick their vendor's math module), and a host object."""
from triton.language.extra.cuda import libdevice as fast

host_thing = object()
