"""Atmosphere Matter Bridge: Matter devices as friendly, typed, permissioned tools."""

__version__ = "0.1.0"
