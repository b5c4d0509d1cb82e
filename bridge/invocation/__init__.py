"""Invocation: tool_invoke/tool_response messages, the call pipeline, jobs, idempotency."""
