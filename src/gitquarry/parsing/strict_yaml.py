"""The one YAML loader for untrusted files (architecture-graph files, the docs policy).

PyYAML's parser produces the event stream; this module builds the values itself, so the
rules below hold whatever PyYAML's constructors would do:

- **YAML 1.2 core scalars.** A plain scalar is ``null`` (``~``, ``null``, ``Null``, ``NULL``
  or empty), a boolean (``true``/``false`` in lower, title or upper case), an integer
  (``[-+]?[0-9]+``, ``0o17``, ``0x1F``), a float (``1.5``, ``1e3``, ``.inf``, ``.nan``) or a
  string. YAML 1.1's ``yes``/``no``/``on``/``off``, sexagesimals (``1:30``), dates and merge
  keys (``<<``) are plain strings. Quoted and block scalars are always strings.
- **Source text is kept.** Integers and floats are :class:`YamlInt` / :class:`YamlFloat`,
  which remember the text as written (``0010``, ``3.10``); every mapping remembers, per key,
  the line it is on and the source text of a scalar value (:meth:`YamlMapping.source`), so a
  caller can keep an identifier exactly as written.
- **Mapping keys are strings**: a scalar key's source text (``1: x`` has the key ``"1"``);
  a collection or alias as a key is an error.
- **Duplicate keys** in any mapping, at any depth, are an error naming the key and both lines.
- **No tags**: any explicit tag (``!!python/object``, ``!!str``, ``!custom``) is an error.
- **Bounded**: at most ``max_bytes`` of input, ``max_depth`` nested collections and
  ``max_values`` values *after alias expansion* (an alias counts every value it stands
  for, so a "billion laughs" file of a few hundred bytes is refused, not expanded);
  recursive aliases are refused; one document per file.

Every failure is a :class:`~gitquarry.errors.YamlInputError` (or its subclass
:class:`~gitquarry.errors.YamlLimitError` for the bounds) naming the file label, the line
(1-based) and, where there is one, the key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml import events as ev

from gitquarry.errors import YamlInputError, YamlLimitError

#: The libyaml (C) parser when PyYAML has one; the pure-Python parser otherwise.
_Parser: Any = getattr(yaml, "CParser", None)

DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_VALUES = 200_000

_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL_TRUE = re.compile(r"true|True|TRUE")
_BOOL_FALSE = re.compile(r"false|False|FALSE")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INF = re.compile(r"[-+]?(\.inf|\.Inf|\.INF)")
_NAN = re.compile(r"\.nan|\.NaN|\.NAN")


class YamlInt(int):
    """An integer scalar that remembers its source text (``source``: ``"0010"`` for 10)."""

    source: str

    def __new__(cls, value: int, source: str) -> YamlInt:
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


class YamlFloat(float):
    """A float scalar that remembers its source text (``source``: ``"3.10"`` for 3.1)."""

    source: str

    def __new__(cls, value: float, source: str) -> YamlFloat:
        obj = super().__new__(cls, value)
        obj.source = source
        return obj


class YamlMapping(dict[str, Any]):
    """A mapping with positions: ``line`` (1-based) of the mapping, ``key_lines[key]`` of
    each key, and ``sources[key]`` the source text of a scalar value (absent for
    collections)."""

    line: int
    key_lines: dict[str, int]
    sources: dict[str, str]

    def source(self, key: str) -> str | None:
        """The value of ``key`` as written in the file, when it is a scalar; else None."""
        return self.sources.get(key)


class YamlSequence(list[Any]):
    """A sequence with positions: ``line`` of the sequence, ``item_lines[i]`` of item ``i``
    and ``sources[i]`` the source text of scalar item ``i`` (None for a collection)."""

    line: int
    item_lines: list[int]
    sources: list[str | None]


def resolve_plain(text: str) -> Any:
    """The YAML 1.2 core-schema value of the plain scalar ``text`` (see module docstring)."""
    if _NULL.fullmatch(text):
        return None
    if _BOOL_TRUE.fullmatch(text):
        return True
    if _BOOL_FALSE.fullmatch(text):
        return False
    if _INT10.fullmatch(text):
        return YamlInt(int(text, 10), text)
    if _INT8.fullmatch(text):
        return YamlInt(int(text[2:], 8), text)
    if _INT16.fullmatch(text):
        return YamlInt(int(text[2:], 16), text)
    if _FLOAT.fullmatch(text):
        return YamlFloat(float(text), text)
    if _INF.fullmatch(text):
        return YamlFloat(-math.inf if text.startswith("-") else math.inf, text)
    if _NAN.fullmatch(text):
        return YamlFloat(math.nan, text)
    return text


@dataclass
class _Frame:
    value: YamlMapping | YamlSequence
    anchor: str | None
    line: int
    size: int = 1
    pending_key: str | None = None
    pending_key_line: int = 0


def _line(event: Any) -> int:
    mark = getattr(event, "start_mark", None)
    return int(mark.line) + 1 if mark is not None else 0


def load_yaml(
    text: str | bytes,
    label: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_values: int = DEFAULT_MAX_VALUES,
) -> Any:
    """Parse one YAML document of untrusted ``text`` under the module's rules.

    ``label`` names the source in errors (a repository-relative path, never read here).
    Returns None for an empty document, else a :class:`YamlMapping`, :class:`YamlSequence`,
    string, :class:`YamlInt`, :class:`YamlFloat`, bool or None.

    :raises YamlLimitError: over ``max_bytes`` bytes, ``max_depth`` levels or ``max_values``
        values after alias expansion.
    :raises YamlInputError: not UTF-8, not valid YAML, a duplicate key, an explicit tag, a
        non-scalar key, an undefined or recursive alias, or more than one document.
    """
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if len(raw) > max_bytes:
        raise YamlLimitError(label, 0, f"the file is {len(raw):,} bytes; the limit is "
                             f"{max_bytes:,}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlInputError(label, 0, f"not UTF-8 text ({exc.reason})") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    builder = _Builder(label, max_depth, max_values)
    parser: Any = None
    try:
        # inside the try: PyYAML's pure-Python reader checks the whole text for characters
        # YAML does not allow (a control character such as ESC) when it is created
        parser = _Parser(text) if _Parser is not None else yaml.Loader(text)
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, ev.StreamEndEvent):
                break
            builder.feed(event)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        line = text.count("\n", 0, max(0, int(exc.position))) + 1
        character = exc.character
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        raise YamlInputError(label, line, f"not valid YAML: character {shown} is not "
                             "allowed (a control character)") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = int(mark.line) + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlInputError(label, line, f"not valid YAML: {problem}") from exc
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return builder.result


class _Builder:
    """Builds values from parser events, enforcing the module's rules."""

    def __init__(self, label: str, max_depth: int, max_values: int) -> None:
        self.label = label
        self.max_depth = max_depth
        self.max_values = max_values
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.total = 0
        self.documents = 0
        self.result: Any = None

    def _error(self, line: int, detail: str, key: str | None = None) -> YamlInputError:
        return YamlInputError(self.label, line, detail, key=key)

    def _count(self, size: int, line: int) -> None:
        self.total += size
        if self.total > self.max_values:
            raise YamlLimitError(
                self.label, line,
                f"expands to more than {self.max_values:,} values (aliases count every value "
                "they repeat)",
            )

    def feed(self, event: Any) -> None:
        line = _line(event)
        if isinstance(event, ev.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise self._error(line, "holds more than one YAML document")
            return
        if isinstance(event, ev.StreamStartEvent | ev.DocumentEndEvent):
            return
        tag = getattr(event, "tag", None)
        if tag is not None and not isinstance(event, ev.AliasEvent):
            raise self._error(line, f"explicit YAML tags are not allowed (found {tag!r})")
        if isinstance(event, ev.ScalarEvent):
            plain = event.style is None and event.implicit[0]
            value = resolve_plain(event.value) if plain else event.value
            self._count(1, line)
            self._add(value, event.value, 1, event.anchor, line, is_scalar=True)
        elif isinstance(event, ev.AliasEvent):
            anchor = event.anchor
            if anchor in self.open_anchors:
                raise self._error(line, f"recursive alias *{anchor} is not allowed")
            if anchor not in self.anchors:
                raise self._error(line, f"alias *{anchor} names no anchor defined before it")
            value, size = self.anchors[anchor]
            self._count(size, line)
            source = value if isinstance(value, str) else getattr(value, "source", None)
            self._add(value, source, size, None, line, is_scalar=source is not None)
        elif isinstance(event, ev.MappingStartEvent | ev.SequenceStartEvent):
            if len(self.stack) >= self.max_depth:
                raise YamlLimitError(self.label, line,
                                     f"nests deeper than {self.max_depth} levels")
            if self.stack and isinstance(self.stack[-1].value, YamlMapping) \
                    and self.stack[-1].pending_key is None:
                raise self._error(line, "mapping keys must be plain text, not collections")
            container: YamlMapping | YamlSequence
            if isinstance(event, ev.MappingStartEvent):
                container = YamlMapping()
                container.key_lines, container.sources = {}, {}
            else:
                container = YamlSequence()
                container.item_lines, container.sources = [], []
            container.line = line
            self._count(1, line)
            if event.anchor:
                self.open_anchors.add(event.anchor)
            self.stack.append(_Frame(container, event.anchor, line))
        elif isinstance(event, ev.MappingEndEvent | ev.SequenceEndEvent):
            frame = self.stack.pop()
            if frame.anchor:
                self.open_anchors.discard(frame.anchor)
            self._add(frame.value, None, frame.size, frame.anchor, frame.line, is_scalar=False)

    def _add(self, value: Any, source: str | None, size: int, anchor: str | None, line: int,
             *, is_scalar: bool) -> None:
        if anchor:
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.result = value
            return
        frame = self.stack[-1]
        frame.size += size
        if isinstance(frame.value, YamlSequence):
            frame.value.append(value)
            frame.value.item_lines.append(line)
            frame.value.sources.append(source if is_scalar else None)
            return
        mapping = frame.value
        if frame.pending_key is None:
            if not is_scalar or source is None:
                raise self._error(line, "mapping keys must be plain text, not collections")
            key = source
            if key in mapping.key_lines:
                first = mapping.key_lines[key]
                raise self._error(
                    line, f"duplicate key {key!r} (first on line {first})", key=key
                )
            frame.pending_key, frame.pending_key_line = key, line
            return
        key = frame.pending_key
        mapping[key] = value
        mapping.key_lines[key] = frame.pending_key_line
        if is_scalar and source is not None:
            mapping.sources[key] = source
        frame.pending_key = None


def scalar_text(value: Any, source: str | None) -> str | None:
    """A scalar exactly as written: a string as is, a number or boolean as its source text
    (``0010``, ``3.10``, ``true``), None for null, a collection or a missing value."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, str):
        return value
    if source is not None:
        return source
    return getattr(value, "source", None) or str(value)


def to_plain(value: Any) -> Any:
    """``value`` with the position-keeping types replaced by plain ``dict``/``list``/``int``/
    ``float`` (for ``json``/``yaml.safe_dump``)."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, YamlInt):
        return int(value)
    if isinstance(value, YamlFloat):
        return float(value)
    return value
