"""One typed, frozen request per corpus, built once at each surface's edge.

Each surface (CLI, MCP, web) turns its own input (typer options, tool arguments, form
fields) into one request object with the builder of its corpus; the builder parses what
needs parsing (time bounds) and runs the corpus's one validation, so the same bad input is
the same typed error (``gitquarry.errors``) whichever surface it came through. Everything
below the surfaces (answers, searchers, the search functions) takes the request object.

- :mod:`gitquarry.query.history`: ``HistoryRequest`` (commit-history search).
- :mod:`gitquarry.query.docs`: ``DocsRequest`` (repository docs search).
- :mod:`gitquarry.query.graph`: ``GraphRequest`` (architecture-graph search).

The modules import only light parts (errors, the time and glob parsers), so a surface may
build a request before it loads any index or model code.
"""
