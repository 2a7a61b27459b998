"""What every door (the REST API, MCP, the web UI) shares, so none leans on another.

`tokens`: an `Authorization: Bearer` header or a raw token resolved to a live agent token;
`throttling`: the per-caller rate limit, one budget across doors; `statuses`: the one
status → HTTP table; `bodies`: request bodies bounded in depth; `errors`: the JSON bodies of
refusals. Framework-free (Django only): the API door adapts them to DRF, MCP to ASGI.
"""
