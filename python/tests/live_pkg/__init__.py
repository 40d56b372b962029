"""A package whose helpers are defined twice under conditions that only
host code decides, imported by a kernel of another of its files."""
