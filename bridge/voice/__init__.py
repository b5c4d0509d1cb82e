"""Spoken commands: Home Assistant's intent language on our devices, and a Wyoming service."""
