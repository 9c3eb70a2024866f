"""Machine-local configuration, read from TOML.

Sources, later overriding earlier, key by key: built-in defaults; the user config file
(``$GITQUARRY_CONFIG`` if set, else ``<user config dir>/gitquarry/config.toml``); the workspace
file ``<workspace>/.gitquarry.toml``. Unknown sections or keys, and values of the wrong type,
raise ``ConfigError`` naming the file: nothing is silently dropped.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gitquarry.errors import ConfigError

DEFAULT_EXCLUDES: tuple[str, ...] = (
    "**/.stversions/**",
    "**/build/**",
    "**/dist/**",
    "**/.venv/**",
    "**/venv/**",
    "**/node_modules/**",
    "**/__pycache__/**",
    "**/.pytest_cache/**",
    "**/.tox/**",
    "**/.mypy_cache/**",
)

DEFAULT_REF_GLOBS: tuple[str, ...] = ("refs/heads/**", "refs/remotes/**", "refs/tags/**")


@dataclass
class IndexingConfig:
    """``[indexing]``: where repositories are discovered and where the index lives."""

    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    exclude_hidden_dirs: bool = True
    #: index directory; relative paths are relative to the workspace.
    index_dir: str = ".gitquarry"


@dataclass
class GitIndexingConfig:
    """``[git_indexing]``: what the commit-history corpus reads from each repository."""

    enabled: bool = True
    #: ref globs (gitignore-style ``**``) selecting the refs whose history is indexed.
    refs: list[str] = field(default_factory=lambda: list(DEFAULT_REF_GLOBS))
    #: lines of ``git show`` diff kept per commit; the rest is counted, not stored.
    delta_max_lines: int = 200
    #: commits per ``git log`` process and per SQLite transaction.
    batch_size: int = 2000


@dataclass
class EmbeddingConfig:
    """``[embedding]``: the embedding provider. Default: bundled all-MiniLM-L6-v2 on ONNX."""

    #: "minilm-onnx" (bundled, offline), "sentence-transformers", "openai", or "none".
    provider: str = "minilm-onnx"
    #: model name or local path (sentence-transformers) or served model id (openai).
    model: str = ""
    #: "cpu", "cuda" or "auto", for in-process providers.
    device: Literal["cpu", "cuda", "auto"] = "cpu"
    #: base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1.
    url: str = ""
    #: name of the environment variable holding the API key (never the key itself).
    api_key_env: str = ""
    #: where text goes: local_process, local_network, remote, unknown.
    data_boundary: str = ""
    #: explicit opt-in to send repository content to a remote/unknown boundary.
    allow_remote: bool = False
    #: texts per embedding call while indexing.
    batch_size: int = 100
    #: request timeout for HTTP providers, seconds.
    timeout_s: float = 60.0


@dataclass
class SearchConfig:
    """``[search]``: ranking defaults."""

    mode: Literal["hybrid", "semantic", "lexical"] = "hybrid"
    rrf_k: int = 60
    lexical_weight: float = 1.0
    semantic_weight: float = 1.0
    top_n: int = 5


@dataclass
class GraphConfig:
    """``[graph]``: architecture-graph sources, relative to the project root."""

    graph_dir: str = ".beadloom/_graph"
    docs_dir: str = "docs"
    chunk_max_chars: int = 2000


@dataclass
class Config:
    indexing: IndexingConfig = field(default_factory=IndexingConfig)
    git_indexing: GitIndexingConfig = field(default_factory=GitIndexingConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    #: files that were read, in order.
    sources: list[Path] = field(default_factory=list)


def user_config_path() -> Path:
    env = os.environ.get("GITQUARRY_CONFIG")
    if env:
        return Path(env)
    from platformdirs import user_config_dir

    return Path(user_config_dir("gitquarry")) / "config.toml"


def _check_type(value: Any, annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return value in typing.get_args(annotation)
    if origin in (list,):
        (inner,) = typing.get_args(annotation)
        return isinstance(value, list) and all(_check_type(v, inner) for v in value)
    if origin in (typing.Union, types.UnionType):
        return any(_check_type(value, a) for a in typing.get_args(annotation))
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(annotation, type):
        return isinstance(value, annotation)
    return True


def _describe(annotation: Any) -> str:
    """A type annotation in words, for error messages."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(annotation))
    if origin is list:
        (inner,) = typing.get_args(annotation)
        return f"a list of {_describe(inner)}s"
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    return names.get(annotation, str(annotation))


def _apply(config: Config, data: dict[str, Any], path: Path) -> None:
    sections = {f.name: f for f in dataclasses.fields(Config) if f.name != "sources"}
    for section, values in data.items():
        if section not in sections:
            raise ConfigError(path, f"unknown section [{section}]; known: {', '.join(sections)}")
        if not isinstance(values, dict):
            raise ConfigError(path, f"[{section}] must be a table")
        target = getattr(config, section)
        hints = typing.get_type_hints(type(target))
        for key, value in values.items():
            if key not in hints:
                raise ConfigError(
                    path, f"unknown key {key!r} in [{section}]; known: {', '.join(hints)}"
                )
            if not _check_type(value, hints[key]):
                raise ConfigError(
                    path, f"[{section}] {key} = {value!r}: expected {_describe(hints[key])}"
                )
            setattr(target, key, value)


def load_config(workspace: Path | None = None, *, user_file: Path | None = None) -> Config:
    """Build the effective configuration for ``workspace``.

    :raises ConfigError: a file is not valid TOML, or holds an unknown section/key or a value
        of the wrong type.
    """
    config = Config()
    candidates = [user_file or user_config_path()]
    if workspace is not None:
        candidates.append(workspace / ".gitquarry.toml")
    for path in candidates:
        if path.exists() and not path.is_file():
            raise ConfigError(path, "is not a regular file")
        if not path.is_file():
            continue  # a missing file means defaults (tests point GITQUARRY_CONFIG at one)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(path, f"not valid TOML: {exc}") from exc
        _apply(config, data, path)
        config.sources.append(path)
    _validate(config, config.sources[-1] if config.sources else None)
    return config


def _validate(config: Config, path: Path | None) -> None:
    """Range checks the types alone cannot express. :raises ConfigError: naming the key."""
    from gitquarry.errors import InvalidGlobError
    from gitquarry.retrieval.filters import compile_glob

    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(path, f"{key} {why}")

    if config.git_indexing.delta_max_lines < 1:
        raise bad("[git_indexing] delta_max_lines", "must be >= 1")
    if config.git_indexing.batch_size < 1:
        raise bad("[git_indexing] batch_size", "must be >= 1")
    if config.embedding.batch_size < 1:
        raise bad("[embedding] batch_size", "must be >= 1")
    if not (math.isfinite(config.embedding.timeout_s) and config.embedding.timeout_s > 0):
        raise bad("[embedding] timeout_s", "must be a positive number of seconds")
    search = config.search
    if search.rrf_k < 1:
        raise bad("[search] rrf_k", "must be >= 1")
    for key in ("lexical_weight", "semantic_weight"):
        value = getattr(search, key)
        if not (math.isfinite(value) and value >= 0):
            raise bad(f"[search] {key}", "must be a finite number >= 0")
    if search.lexical_weight == 0 and search.semantic_weight == 0:
        raise bad("[search] lexical_weight and semantic_weight", "cannot both be 0")
    if not 1 <= search.top_n <= 100:
        raise bad("[search] top_n", "must be from 1 to 100")
    if config.graph.chunk_max_chars < 100:
        raise bad("[graph] chunk_max_chars", "must be >= 100")
    index_dir = config.indexing.index_dir.strip()
    if index_dir in ("", ".", "./"):
        raise bad("[indexing] index_dir", "must name a directory other than the workspace")
    for key, patterns in (
        ("[git_indexing] refs", config.git_indexing.refs),
        ("[indexing] exclude", config.indexing.exclude),
    ):
        for pattern in patterns:
            try:
                compile_glob(pattern)
            except InvalidGlobError as exc:
                raise bad(key, f"holds an invalid glob: {exc}") from exc
