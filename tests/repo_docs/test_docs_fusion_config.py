"""``[docs] rrf_k / lexical_weight / semantic_weight``: the docs corpus's own hybrid fusion
constants (issue 22, lever "fusion constants"), read and range-checked like ``[search]``'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitquarry.config import Config, load_config
from gitquarry.errors import ConfigError


def test_docs_fusion_defaults_are_the_measured_ones() -> None:
    docs = Config().docs
    assert (docs.rrf_k, docs.lexical_weight, docs.semantic_weight) == (10, 1.0, 1.5)
    # the history corpus's constants are not changed by them
    assert Config().search.rrf_k == 40


def test_docs_fusion_keys_are_read(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text("[docs]\nrrf_k = 30\nlexical_weight = 2.0\nsemantic_weight = 0.5\n")
    docs = load_config(user_file=user).docs
    assert (docs.rrf_k, docs.lexical_weight, docs.semantic_weight) == (30, 2.0, 0.5)


@pytest.mark.parametrize("body", [
    "rrf_k = 0", "semantic_weight = -1.0", "lexical_weight = 0.0\nsemantic_weight = 0.0",
])
def test_docs_fusion_keys_out_of_range_are_refused(tmp_path: Path, body: str) -> None:
    user = tmp_path / "config.toml"
    user.write_text(f"[docs]\n{body}\n")
    with pytest.raises(ConfigError, match=r"\[docs\]"):
        load_config(user_file=user)
