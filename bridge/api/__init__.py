"""The HTTP/WebSocket API: the aiohttp application and one route module per area."""
