"""Keeping the tool registry in step with the controller, and executing device calls."""
