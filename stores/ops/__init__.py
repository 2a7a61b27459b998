"""The op catalog: every op of the edit service declared once, for every door.

`names` is the one vocabulary of op words (the policy's too), `params` the typed parameters
an op takes, and `catalog` the ops themselves: the surfaces each applies to, its parameters,
whether it writes, and the service or selector it calls. The REST actions, the tools (and so
the MCP tools) and the web page's op forms are generated from `catalog.CATALOG`.
"""
