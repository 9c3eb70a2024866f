"""The repository-owned docs policy: which tracked files form the documentation corpus.

Read at the resolved commit from ``.gitquarry.yaml`` (section ``repository_docs``), else from
``.gitcode/gitcode-mcp.yaml`` (same section), else the built-in preset. Keys: ``schema``
(required, 1), ``enabled`` (default true), ``preset`` (``conventional-docs-v1`` default, or
``none``), ``include`` and ``exclude`` (lists of patterns). The file is untrusted: it is read
by the strict YAML loader, and anything unexpected fails closed with
``RepoDocsPolicyInvalidError`` naming the file, key and pattern. The policy never chooses
providers, paths outside the repository or limits: those are machine-local (``[docs]``).

Patterns are repository-relative globs, anchored at the root and case-sensitive: ``**``
spans zero or more path segments, ``*`` and ``?`` stay inside one segment, ``[abc]`` is a
character class. ``\\`` becomes ``/`` and a leading ``./`` is dropped; absolute paths, ``..``
and empty segments are refused. ``conventional-docs-v1`` selects root ``README*``, root
``AGENTS.md`` and ``docs/**``; includes add to the preset, excludes then remove.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitquarry.errors import RepoDocsPolicyInvalidError, YamlInputError
from gitquarry.globs import syntax_problem

if TYPE_CHECKING:  # the YAML parser only when a policy file exists
    from gitquarry.parsing.strict_yaml import YamlMapping

POLICY_FILES = (".gitquarry.yaml", ".gitcode/gitcode-mcp.yaml")
SECTION = "repository_docs"
SCHEMA_VERSION = 1
DEFAULT_PRESET = "conventional-docs-v1"
PRESETS: dict[str, tuple[str, ...]] = {
    "conventional-docs-v1": ("README*", "AGENTS.md", "docs/**"),
    "none": (),
}
#: Version of the glob semantics below; part of the policy hash.
MATCHER_REVISION = "wcmatch-globstar-case-v2"
MAX_POLICY_BYTES = 256 * 1024
MAX_PATTERNS = 1000
_KEYS = ("schema", "enabled", "preset", "include", "exclude", "cache_mode")
#: seed 002's ``cache_mode`` (top level, or in the section): the one mode there is, a cache
#: beside the repository's workspace that Git can rebuild; any other value is refused.
CACHE_MODES = ("repo-local",)
#: ``wcmatch.glob.GLOBSTAR | DOTGLOB | CASE | NOUNIQUE``, written out: importing wcmatch is
#: ~20 ms CPU of a cold docs search, and the built-in preset needs none of it (issue 21 §5;
#: ``tests/repo_docs/test_policy_lazy.py`` checks the value against wcmatch's)
_FLAGS = 524609
#: what the installed wcmatch compiles each built-in preset pattern to under ``_FLAGS`` (one
#: include regex, matched whole, no exclusion, no real-path check): a policy whose patterns are
#: all here matches with ``re`` alone. Checked against wcmatch's translation, and the matches
#: against wcmatch's, by ``tests/repo_docs/test_policy_lazy.py``
_KNOWN_REGEXES: dict[str, str] = {
    "README*": r"^(?s:README[^/]*?[/]*?)$",
    "AGENTS.md": r"^(?s:AGENTS\.md[/]*?)$",
    "docs/**": r"^(?s:docs(?=[/])(?:(?!(?:[/]|^)(?:\.{1,2})(?:$|[/])).)*?(?:^|$|[/]+))$",
}
_DRIVE = re.compile(r"^[A-Za-z]:")


def canonical_json(data: Any) -> bytes:
    """Canonical JSON (sorted keys, no spaces, UTF-8): a hashing contract, never changed."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, kw_only=True)
class DocsPolicy:
    """An effective docs policy.

    ``source`` is ``builtin``, ``committed_config`` or ``worktree_config``; ``policy_file``
    the repository-relative file it came from (None for builtin). ``include``/``exclude`` are
    the normalised, deduplicated, sorted explicit patterns; ``policy_hash`` the sha256 of the
    canonical JSON of schema, enabled, preset, matcher revision and both lists.
    """

    schema: int = SCHEMA_VERSION
    enabled: bool = True
    preset: str = DEFAULT_PRESET
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    source: str = "builtin"
    policy_file: str | None = None
    _compiled: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def canonical(self) -> dict[str, Any]:
        return {
            "schema": self.schema, "enabled": self.enabled, "preset": self.preset,
            "preset_patterns": list(PRESETS[self.preset]), "matcher": MATCHER_REVISION,
            "include": list(self.include), "exclude": list(self.exclude),
        }

    @property
    def policy_hash(self) -> str:
        return sha256_hex(canonical_json(self.canonical()))

    @property
    def effective_include(self) -> tuple[str, ...]:
        return tuple(sorted(set(PRESETS[self.preset]) | set(self.include)))

    def _matcher(self, name: str, patterns: tuple[str, ...]) -> Callable[[str], bool]:
        matcher = self._compiled.get(name)
        if matcher is None:
            matcher = self._compiled[name] = _glob_matcher(patterns)
        return matcher  # type: ignore[no-any-return]

    def selects(self, path: str) -> str | None:
        """Why ``path`` is out of the corpus (``disabled``, ``not_selected``,
        ``policy_excluded``), or None when the policy selects it."""
        if not self.enabled:
            return "disabled"
        if not self._matcher("include", self.effective_include)(path):
            return "not_selected"
        if self.exclude and self._matcher("exclude", self.exclude)(path):
            return "policy_excluded"
        return None

    def explicitly_included(self, path: str) -> bool:
        """Whether an explicit ``include`` pattern that names ``path``'s extension selects it
        (``architecture/**/*.yaml`` takes ``.yaml`` files as text; ``docs/**`` does not take
        ``.svg`` or ``.js`` files)."""
        ext = posixpath.splitext(path)[1]
        if not ext:
            return False
        named = tuple(p for p in self.include if posixpath.basename(p).endswith(ext))
        return bool(named) and self._matcher("explicit" + ext, named)(path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy_source": self.source, "policy_file": self.policy_file,
            "policy_hash": self.policy_hash, "schema": self.schema, "enabled": self.enabled,
            "preset": self.preset, "preset_patterns": list(PRESETS[self.preset]),
            "include": list(self.include), "exclude": list(self.exclude),
            "effective_include": list(self.effective_include), "matcher": MATCHER_REVISION,
        }


def _glob_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a path matches any of ``patterns`` (wcmatch globs under ``_FLAGS``): by the
    known regexes when every pattern has one (the built-in preset: no wcmatch import), else by
    wcmatch."""
    if all(p in _KNOWN_REGEXES for p in patterns):
        regexes = [re.compile(_KNOWN_REGEXES[p]).fullmatch for p in patterns]

        def known(path: str) -> bool:
            return any(r(path) for r in regexes)

        return known
    from wcmatch import glob as wcglob

    compiled = [wcglob.compile(p, flags=_FLAGS) for p in patterns]

    def match(path: str) -> bool:
        return any(c.match(path) for c in compiled)

    return match


BUILTIN_POLICY = DocsPolicy()


def normalise_pattern(raw: str, *, policy_file: str, key: str, line: int = 0) -> str:
    """``raw`` as a canonical pattern (see module docstring). ``line``: where the file holds it
    (named by the error; 0: unknown).

    :raises RepoDocsPolicyInvalidError: empty, absolute, ``..``, an empty segment, a NUL, an
        unclosed ``[`` (``gitquarry.globs.syntax_problem``: the check ``--files-glob`` makes,
        where wcmatch alone would read ``docs/[a`` as a literal) or a pattern the glob library
        refuses.
    """
    def bad(why: str) -> RepoDocsPolicyInvalidError:
        return RepoDocsPolicyInvalidError(policy_file, f"{key} pattern {raw!r} {why}", key=key,
                                          pattern=raw, line=line)

    pattern = raw.replace("\\", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if not pattern.strip():
        raise bad("is empty")
    if "\x00" in pattern or "\n" in pattern:
        raise bad("holds a control character")
    if pattern.startswith("/") or _DRIVE.match(pattern):
        raise bad("is absolute; patterns are relative to the repository root")
    segments = pattern.split("/")
    if ".." in segments:
        raise bad("holds '..'")
    if "" in segments:
        raise bad("holds an empty path segment")
    problem = syntax_problem(pattern, braces=False)  # braces are literal in policy patterns
    if problem is not None:
        raise bad(f"is not a valid glob ({problem})")
    from wcmatch import glob as wcglob  # (policy files only)

    try:
        wcglob.compile(pattern, flags=_FLAGS)
    except Exception as exc:  # wcmatch refuses it: ValueError, pattern limits
        raise bad(f"is not a valid glob ({exc})") from exc
    return pattern


def _patterns(section: YamlMapping, key: str, policy_file: str) -> tuple[str, ...]:
    value = section.get(key)
    line = section.key_lines.get(key, 0)
    if value is None and key in section:
        raise RepoDocsPolicyInvalidError(policy_file, f"{key} must be a list of patterns",
                                         key=key, line=line)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RepoDocsPolicyInvalidError(
            policy_file, f"{key} must be a list of patterns, got {type(value).__name__}",
            key=key, line=line,
        )
    if len(value) > MAX_PATTERNS:
        raise RepoDocsPolicyInvalidError(policy_file, f"{key} holds more than {MAX_PATTERNS} "
                                         "patterns", key=key, line=line)
    from gitquarry.parsing.strict_yaml import scalar_text

    sources = getattr(value, "sources", [None] * len(value))
    lines = getattr(value, "item_lines", [line] * len(value))
    out: set[str] = set()
    for item, source, item_line in zip(value, sources, lines, strict=True):
        # as written: `no`, `on`, `1e3` are patterns of those characters, never booleans
        text = scalar_text(item, source) if not isinstance(item, bool) else source
        if text is None or not text.strip():
            raise RepoDocsPolicyInvalidError(
                policy_file, f"{key} entries must be non-empty strings", key=key,
                line=item_line,
            )
        out.add(normalise_pattern(text, policy_file=policy_file, key=key, line=item_line))
    return tuple(sorted(out))


def _check_cache_mode(mapping: Any, policy_file: str) -> None:
    """:raises RepoDocsPolicyInvalidError: ``mapping`` holds ``cache_mode`` with a value other
    than ``repo-local`` (seed 002's, accepted: the docs cache is always repository-local)."""
    if "cache_mode" not in mapping:
        return
    value = mapping["cache_mode"]
    if isinstance(value, str) and value in CACHE_MODES:
        return
    lines = getattr(mapping, "key_lines", {})
    shown = mapping.source("cache_mode") if hasattr(mapping, "source") else None
    raise RepoDocsPolicyInvalidError(
        policy_file, f"cache_mode must be {' or '.join(CACHE_MODES)}, got {shown or value!r}",
        key="cache_mode", line=lines.get("cache_mode", 0),
    )


def parse_policy_file(data: bytes, policy_file: str, *, source: str) -> DocsPolicy | None:
    """The policy held in ``data`` (the bytes of ``policy_file``), or None when the file has
    no ``repository_docs`` section.

    :raises RepoDocsPolicyInvalidError: the file or its section is invalid (see module).
    """
    if len(data) > MAX_POLICY_BYTES:
        raise RepoDocsPolicyInvalidError(
            policy_file, f"the file is {len(data):,} bytes; the limit is {MAX_POLICY_BYTES:,}"
        )
    from gitquarry.parsing.strict_yaml import YamlMapping, load_yaml

    try:
        document = load_yaml(data, policy_file, max_bytes=MAX_POLICY_BYTES, max_values=50_000)
    except YamlInputError as exc:
        raise RepoDocsPolicyInvalidError(policy_file, exc.detail, key=exc.key,
                                         line=exc.line) from exc
    if document is None:
        return None
    if not isinstance(document, dict):
        raise RepoDocsPolicyInvalidError(policy_file, "the top level must be a mapping")
    _check_cache_mode(document, policy_file)
    if SECTION not in document:
        return None
    section = document[SECTION]
    line = document.key_lines.get(SECTION, 0) if isinstance(document, YamlMapping) else 0
    if not isinstance(section, YamlMapping):
        raise RepoDocsPolicyInvalidError(policy_file, f"{SECTION} must be a mapping",
                                         key=SECTION, line=line)
    for key in section:
        if key not in _KEYS:
            raise RepoDocsPolicyInvalidError(
                policy_file, f"unknown key {key!r} in {SECTION}; known: {', '.join(_KEYS)}",
                key=key, line=section.key_lines.get(key, 0),
            )

    def line_of(key: str) -> int:
        return section.key_lines.get(key, line)

    _check_cache_mode(section, policy_file)

    schema = section.get("schema")
    if "schema" not in section:
        raise RepoDocsPolicyInvalidError(policy_file, "schema is required (schema: 1)",
                                         key="schema", line=line)
    if isinstance(schema, bool) or not isinstance(schema, int) or schema != SCHEMA_VERSION:
        raise RepoDocsPolicyInvalidError(
            policy_file, f"schema must be {SCHEMA_VERSION}, got {section.source('schema')!r}",
            key="schema", line=line_of("schema"),
        )
    enabled = section.get("enabled", True)
    if not isinstance(enabled, bool):
        raise RepoDocsPolicyInvalidError(
            policy_file,
            f"enabled must be true or false, got {section.source('enabled')!r}",
            key="enabled", line=line_of("enabled"),
        )
    preset = section.get("preset", DEFAULT_PRESET)
    if not isinstance(preset, str) or preset not in PRESETS:
        raise RepoDocsPolicyInvalidError(
            policy_file, f"preset must be one of {', '.join(PRESETS)}, got "
            f"{section.source('preset') or preset!r}", key="preset", line=line_of("preset"),
        )
    include = _patterns(section, "include", policy_file)
    exclude = _patterns(section, "exclude", policy_file)
    if preset == "none" and enabled and not include:
        raise RepoDocsPolicyInvalidError(
            policy_file, "preset: none selects nothing; add at least one include pattern",
            key="include", line=line_of("preset"),
        )
    return DocsPolicy(enabled=enabled, preset=preset, include=include, exclude=exclude,
                      source=source, policy_file=policy_file)
