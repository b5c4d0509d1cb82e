"""The tool layer: definitions, identities, the registry, validation and tool sources.

Knows nothing about Matter or the mesh; they produce and ship ``ToolDefinition``s.
"""
