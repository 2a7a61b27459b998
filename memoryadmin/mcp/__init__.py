"""The MCP door: the tool registry of `stores.tools` served over the Model Context Protocol.

`server.build_server` makes the one MCP server; `http` serves it at /mcp/ (streamable HTTP,
mounted in the ASGI app beside Django) and `stdio` serves it to a local agent
(`manage.py mcp_stdio --token …`).
"""
