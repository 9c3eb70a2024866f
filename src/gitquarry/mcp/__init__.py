"""MCP server surface: tools over the gitquarry corpora."""
