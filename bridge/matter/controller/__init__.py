"""Talking to the Matter controller: adapter, gateway, managed process, commissioning."""
