"""The default ``[indexing] exclude`` and ``[git_indexing] refs`` globs are valid, so the
configuration check may skip compiling them on every start (issue 21 §1), and a changed
pattern is still checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitquarry.config import DEFAULT_EXCLUDES, DEFAULT_REF_GLOBS, load_config
from gitquarry.errors import ConfigError
from gitquarry.retrieval.filters import compile_glob


@pytest.mark.parametrize("pattern", [*DEFAULT_EXCLUDES, *DEFAULT_REF_GLOBS])
def test_every_default_glob_compiles(pattern: str) -> None:
    assert callable(compile_glob(pattern))


def test_an_invalid_glob_beside_the_defaults_is_still_refused(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    excludes = ", ".join(f'"{p}"' for p in DEFAULT_EXCLUDES)
    user.write_text(f'[indexing]\nexclude = [{excludes}, "src/[ab"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid glob"):
        load_config(None, user_file=user)
    user.write_text('[git_indexing]\nrefs = ["refs/heads/{main"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid glob"):
        load_config(None, user_file=user)
