"""The content of the web tests' workspace and documentation repositories."""

from __future__ import annotations

GRAPH_YAML = """\
nodes:
  - ref_id: search
    kind: feature
    summary: Full text search over graph nodes
    docs: [docs/features/search.md]
  - ref_id: mcp-server
    kind: service
    summary: MCP server exposing tools to agents
    docs: [docs/services/mcp.md]
  - ref_id: cli
    kind: service
    summary: Command line interface to search
edges:
  - {src: mcp-server, dst: search, kind: uses}
  - {src: cli, dst: search, kind: uses}
"""

GRAPH_DOCS = {
    "docs/features/search.md": "# Search\n\n## Ranking\nResults are ordered by BM25 relevance; "
    "snippets highlight matching words.\n",
    "docs/services/mcp.md": "# MCP server\n\n## Transport\nThe server speaks JSON-RPC over "
    "stdio.\n\n## Tools\nThe search tool wraps the search feature.\n",
}

#: (date, files, title, body) of the workspace repository's commits, oldest first
COMMITS = [
    ("2021-03-02T10:00:00Z", {"src/parser.py": "def parse(text):\n    return text.split()\n"},
     "Add the config parser", "First version of the parser for config files."),
    ("2021-09-14T10:00:00Z", {"src/lease.py": "LEASE_S = 10\n\ndef acquire():\n    pass\n"},
     "Writer lease for the index", "One writer at a time; others wait with backoff."),
    ("2022-05-20T10:00:00Z", {"src/parser.py": "def parse(text):\n    return [w for w in "
                              "text.split() if w]\n"},
     "Parser: skip empty words", "Empty words broke the config parser on blank lines."),
    ("2023-01-11T10:00:00Z", {"src/retry.py": "def backoff(n):\n    return 60 * 2 ** (n - 1)"
                              "\n"},
     "Retry failed jobs with exponential backoff", "Failures retry after 1, 2, 4 minutes."),
    ("2023-08-30T10:00:00Z", {"src/lease.py": "LEASE_S = 30\n\ndef acquire():\n    return "
                              "True\n"},
     "Lease: wait longer for the writer", "Thirty seconds is enough for a large batch."),
    ("2024-02-02T10:00:00Z", {"src/parser.py": "def parse(text):\n    # config parser with "
                              "comments\n    return [w for w in text.split() if w and not "
                              "w.startswith('#')]\n"},
     "Config parser understands comments", "Lines starting with # are comments."),
]

DOC_FILES = {
    "README.md": "# Demo\n\nA demo repository for the web page tests.\n",
    "docs/deploy.md": "# Deployment\n\n## Nginx\n\nPut nginx in front of the service and "
    "proxy the socket.\n\n## Writer lease\n\nOnly one writer holds the lease; the others "
    "wait with exponential backoff.\n",
    "docs/config.md": "# Configuration\n\n## Files\n\nThe config parser reads TOML files "
    "and rejects unknown keys.\n\n## Environment\n\nGITQUARRY_CONFIG names the file.\n",
}


def many_docs(n: int) -> dict[str, str]:
    """``n`` small documents (enough chunks for several embedding batches)."""
    return {f"docs/topic-{i:02d}.md": f"# Topic {i}\n\n## Part\n\nSection about topic {i}: "
            f"lease, parser and retry details number {i}.\n" for i in range(n)}
