"""Whether this process is long-lived (the MCP server, the daemon), read when the bundled
model's runtime is created. No imports: the servers set it at start-up without loading
NumPy or ONNX Runtime.

A long-lived process embeds many texts, so it loads the optimised ONNX session at once
instead of answering its first texts with the quick unoptimised one
(:data:`gitquarry.embedding.minilm.QUICK_TEXTS`): replacing a session after the first call
left the first one's memory in the process (MCP server on pallets/click, 100 hybrid calls:
271 MB RSS with the swap, 254 MB without; measured 2026-12-02, docs/performance.md)."""

from __future__ import annotations

_long_lived = False


def mark_long_lived() -> None:
    """This process answers many queries: no quick session (see the module doc)."""
    global _long_lived
    _long_lived = True


def is_long_lived() -> bool:
    """True once :func:`mark_long_lived` was called in this process."""
    return _long_lived
