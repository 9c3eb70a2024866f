"""Markdown headings by a CommonMark parser (cmark-gfm through ``cmarkgfm``, C), with exact
line numbers.

The document is parsed by cmark (CommonMark, no extensions) and rendered with source
positions; only the renderer's own tags are read (raw HTML is not passed through, text is
escaped), so a ``#`` line inside a fenced or indented code block, an HTML block or a list
item's fence is never a heading, and a setext heading (a line underlined with ``===`` or
``---``) is one. Titles are taken from the source lines exactly as markdown-it-py's heading
rules take them (``_atx_title``, ``_setext_title``): the previous parser, whose headings these
are proven equal to on the click, flask and fastapi docs (``tests/repo_docs/
test_markdown_parser.py``); it parsed at ~2 MiB/s, cmark at ~20 MiB/s.
Only top-level headings count as document sections: a heading inside a blockquote or list
item is content. YAML (``---``) or TOML (``+++``) front matter at the very start of the file
is skipped (its lines keep their numbers, they just never form headings).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_FRONT_MATTER = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n")
#: a trailing attribute list (``## Title { #anchor }``, pandoc / Python-Markdown attr_list)
_ATTRS = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
#: ``_ATTRS`` from its ``{`` on (``_drop_attributes``)
_ATTRS_TAIL = re.compile(r"\{\s*[#.][^{}]*\}\s*$")
#: the renderer's heading tags (``<h2 data-sourcepos="L:C-L:C">``); its container tags are
#: ``<blockquote`` / ``<li`` (text is escaped and raw HTML omitted: no other ``<`` can occur)
_HEADING_TAG = re.compile(r'<h([1-6]) data-sourcepos="(\d+):\d+-(\d+):\d+"')
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
#: what markdown-it-py's ``mdTrim`` strips: CommonMark whitespace (space, tab, line feed,
#: vertical tab, form feed, carriage return) plus U+2000-U+200A, U+2028 and U+2029
_TRIM = " \t\n\x0b\x0c\r" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029"


@dataclass(frozen=True)
class Heading:
    """A section heading. ``level`` 1-6; ``title`` its text (stripped, inline markup as
    written, a trailing ``{ #anchor }`` attribute list dropped); ``line_start``/``line_end``
    the 1-based inclusive lines it occupies (a setext heading ends on its underline)."""

    level: int
    title: str
    line_start: int
    line_end: int
    #: the line holding the title text (the line after an RST overline)
    title_line: int = 0


def _render(text: str) -> str:
    import cmarkgfm  # the parser only when a document is parsed
    from cmarkgfm.cmark import Options

    return str(cmarkgfm.markdown_to_html(text, options=Options.CMARK_OPT_SOURCEPOS))


def front_matter_lines(text: str) -> int:
    """Lines taken by front matter at the start of ``text`` (0 when there is none): an
    opening ``---``/``+++`` line and the matching closing line (``---``/``...`` or ``+++``)."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        return 0
    opener = match.group(1)
    closers = ("---", "...") if opener == "---" else ("+++",)
    lines = text.split("\n")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r \t") in closers:
            return i + 1
    return 0


_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def title_from_line(line: str) -> str:
    """A heading's title from its source line (ATX markers, a closing ``#`` run and an
    attribute list removed; a setext or RST title line is its own title)."""
    match = _ATX_LINE.match(line)
    title = (match.group(1) or "") if match else line
    title = title.strip()
    return _ATTRS.sub("", title) or title


def _atx_title(line: str) -> str:
    """An ATX heading's title as markdown-it-py's ``heading`` rule takes it: after the ``#``
    run, without a closing ``#`` run that follows a space or tab, trimmed."""
    rest = line.lstrip(" ").lstrip("#")
    body = rest.rstrip(" \t")
    tail = len(body.rstrip("#"))
    if tail and body[tail - 1] in " \t":
        body = body[:tail]
    return body.strip(_TRIM)


def _setext_title(lines: list[str]) -> str:
    """A setext heading's title (its lines before the underline), as markdown-it-py's
    ``lheading`` rule takes it at the top level: joined by line feeds, trimmed."""
    return "\n".join(lines).strip(_TRIM)


def _html_heading_nodes(text: str) -> list[tuple[int, int, int]]:
    """``(level, first line, last line)`` of each top-level heading, read from cmark's HTML
    rendering with source positions (the fallback when the tree API cannot be loaded)."""
    html = _render(text)
    nodes: list[tuple[int, int, int]] = []
    depth, at = 0, 0
    for match in _HEADING_TAG.finditer(html):
        # container depth (block quotes, list items) from the tags since the last heading
        pos = match.start()
        depth += (html.count("<blockquote", at, pos) + html.count("<li", at, pos)
                  - html.count("</blockquote>", at, pos) - html.count("</li>", at, pos))
        at = pos
        if not depth:
            nodes.append((int(match.group(1)), int(match.group(2)), int(match.group(3))))
    return nodes


_TREE: list[object] = []  # [the tree walker, or None where the library cannot give one]


def _tree_walker() -> Callable[[bytes], list[tuple[int, int, int]]] | None:
    """A walk of cmark's document tree (the same parse the HTML renderer reads), through the
    C API that ``cmarkgfm``'s shared library exports; ``None`` where it cannot be loaded
    (then the HTML rendering is read instead: the same headings, slower)."""
    if _TREE:
        return _TREE[0]  # type: ignore[return-value]
    walker = None
    try:
        walker = _load_tree_walker()
    except (ImportError, OSError, AttributeError, TypeError, ValueError):
        walker = None
    _TREE.append(walker)
    return walker


def _exported_functions(path: str, ffi: Any) -> Callable[[str, str], Any]:
    """``exported(name, signature)``: the shared library ``path``'s exported C function
    ``name`` as a ``cffi`` function pointer of ``ffi``'s type ``signature``. Opened by cffi's
    own backend (what ``cffi.FFI.dlopen`` uses; no C declarations to parse), else by
    ``ctypes`` (a few milliseconds more to import)."""
    try:
        import _cffi_backend

        shared = _cffi_backend.load_library(path)

        def by_backend(name: str, signature: str) -> Any:
            return shared.load_function(ffi.typeof(signature), name)

        by_backend("cmark_node_next", "cmark_node *(*)(cmark_node *)")
        return by_backend
    except (ImportError, AttributeError, OSError, TypeError):
        pass
    import ctypes

    library = ctypes.CDLL(path)

    def by_ctypes(name: str, signature: str) -> Any:
        address = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
        return ffi.cast(signature, address)

    return by_ctypes


def _load_tree_walker() -> Callable[[bytes], list[tuple[int, int, int]]]:
    """The walker: ``cmarkgfm``'s own compiled bindings parse and read node types;
    the node-navigation functions its bindings do not declare (first child, next sibling,
    lines, heading level, free) are the same library's exported C functions, called as
    ``cffi`` function pointers of the bindings' own types (``_exported_functions``)."""
    from cmarkgfm import _cmark

    ffi, lib = _cmark.ffi, _cmark.lib
    exported = _exported_functions(_cmark.__file__, ffi)

    step, number = "cmark_node *(*)(cmark_node *)", "int (*)(cmark_node *)"
    first = exported("cmark_node_first_child", step)
    after = exported("cmark_node_next", step)
    start_line = exported("cmark_node_get_start_line", number)
    end_line = exported("cmark_node_get_end_line", number)
    level = exported("cmark_node_get_heading_level", number)
    free = exported("cmark_node_free", "void (*)(cmark_node *)")
    parse, kind = lib.cmark_parse_document, lib.cmark_node_get_type
    options = lib.CMARK_OPT_SOURCEPOS  # as the HTML route renders (parsing is the same)

    def top_level_headings(data: bytes) -> list[tuple[int, int, int]]:
        doc = parse(data, len(data), options)
        if not doc:
            raise MemoryError("cmark could not parse the document")
        nodes: list[tuple[int, int, int]] = []
        try:
            child = first(doc)
            while child:
                if kind(child) == heading:
                    nodes.append((level(child), start_line(child), end_line(child)))
                child = after(child)
        finally:
            free(doc)
        return nodes

    # the heading node type, read from the library rather than copied from its headers
    probe = parse(b"# x\n", 4, options)
    if not probe:
        raise ValueError("cmark could not parse the probe")
    try:
        heading = kind(first(probe))
    finally:
        free(probe)
    check = "> # q\n\nT\n=\n\n- ## i\n\n## h ##\n"  # the walk reads what the HTML says
    if top_level_headings(check.encode()) != _html_heading_nodes(check):
        raise ValueError("cmark's tree does not read as its HTML rendering does")
    return top_level_headings


def markdown_headings(text: str) -> list[Heading]:
    """The top-level headings of the Markdown ``text``, in document order."""
    return [Heading(*row) for row in heading_rows(text, text.encode("utf-8"), None)]


HeadingRow = tuple[int, str, int, int, int]


def heading_rows(text: str, data: bytes, lines: list[str] | None) -> list[HeadingRow]:
    """``markdown_headings`` as ``(level, title, line_start, line_end, title_line)`` rows,
    for a document already at hand as ``text``, its UTF-8 bytes ``data`` and, optionally,
    ``text.split("\n")`` as ``lines`` (the chunker has all three: nothing is encoded or
    split twice)."""
    skip = front_matter_lines(text)
    if skip:
        # keep line numbers: blank out the front matter rather than cutting it
        parts = text.split("\n")
        text = "\n" * skip + "\n".join(parts[skip:])
        data = text.encode("utf-8")
    if "#" not in text and "=" not in text and "-" not in text:
        return []  # no ATX marker and no setext underline: nothing to parse
    walker = _tree_walker()
    nodes = walker(data) if walker is not None else _html_heading_nodes(text)
    if not nodes:
        return []
    # CommonMark line endings: LF, CR LF and a lone CR (the parser counts lines so)
    if "\r" in text or lines is None:
        source = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    else:
        source = lines  # front matter lines differ, but no heading starts inside it
    rows: list[HeadingRow] = []
    append = rows.append
    nul = "\x00" in text
    for tag, start, stop in nodes:
        if stop == start:  # ATX: one line (``_atx_title`` inlined: most headings are ATX)
            line = source[start - 1]
            if nul:
                line = line.replace("\x00", "\ufffd")
            body = line.lstrip(" ").lstrip("#").rstrip(" \t")
            tail = len(body.rstrip("#"))
            if tail and body[tail - 1] in " \t":
                body = body[:tail]
            title = body.strip(_TRIM)
            if "{" in title:
                title = _drop_attributes(title)
            append((tag, title, start, start, start))
            continue
        end = stop
        if end > start:  # setext: cmark's end may run past the underline; it is the first
            end = next((n for n in range(start + 1, end + 1)
                        if _UNDERLINE.match(source[n - 1])), end)
        title_lines = source[start - 1 : end]
        if nul:
            title_lines = [line.replace("\x00", "\ufffd") for line in title_lines]
        # an ATX heading is one line; a setext heading ends on its underline
        title = (_atx_title(title_lines[0]) if start == end
                 else _setext_title(title_lines[:-1]))
        if "{" in title:  # (no brace: no attribute list to drop)
            title = _drop_attributes(title)
        append((tag, title, start, end, start))
    return rows


def _drop_attributes(title: str) -> str:
    """``_ATTRS.sub("", title) or title``, found from the last ``{``: a match of ``_ATTRS``
    holds one brace pair and nothing but whitespace after it, so its ``{`` is the title's
    last, and the leftmost match starts where the whitespace run before that brace starts
    (``\\s`` and ``str.rstrip()`` are the same characters)."""
    brace = title.rfind("{")
    if brace < 0 or _ATTRS_TAIL.match(title, brace) is None:
        return title
    return title[:brace].rstrip() or title
