"""The bridge and the Model Context Protocol: our MCP server and the hub of MCP servers we use.

- ``names`` — the reversible mapping between ``namespace:name`` keys and MCP tool names;
- ``server`` — the MCP server core exposing the registry's tools per token, calls through
  the invocation pipeline, confirmations and list-changed notifications;
- ``http`` — the server mounted on the bridge's aiohttp app at ``/mcp`` (streamable HTTP);
- ``proxy`` — the stdio server of ``atmosphere-bridge mcp``, relaying to a running bridge;
- ``hub`` — MCP servers from the configuration whose tools enter the registry.
"""
