"""What a ``partial_embeddings`` warning says, by search mode (no numpy: the keyword path
imports it)."""

from __future__ import annotations

from gitquarry.history.models import Warning_

#: How ``partial_embeddings`` ends: in hybrid mode commits without a vector are still ranked
#: by keywords; in semantic mode they are not searched at all (``for_mode`` swaps the tail).
PARTIAL_HYBRID = "the rest are ranked by keywords only"
PARTIAL_SEMANTIC = (
    "semantic mode searches only those (hybrid and lexical search every commit; "
    "`gitquarry index` computes the rest)"
)


def for_mode(warning: Warning_, mode: str) -> Warning_:
    """``warning`` as the answer in ``mode`` should say it: a ``partial_embeddings`` warning
    in semantic mode names what semantic mode actually searched; any other is unchanged."""
    if mode != "semantic" or warning.code != "partial_embeddings":
        return warning
    if not warning.message.endswith(PARTIAL_HYBRID):
        return warning
    head = warning.message[: -len(PARTIAL_HYBRID)]
    return Warning_(code=warning.code, message=head + PARTIAL_SEMANTIC)
