"""Tool sources beside Matter: other MCP servers' tools (the hub) and client tools.

They only register tools and handlers; the pipeline calls them like any other source.
"""
