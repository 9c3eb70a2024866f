"""Markdown parser backends for the docs chunker, timed alternately on the same documents,
and their top-level headings compared.

    python benchmarks/docs_parser_ab.py --repo GIT_DIR ... [--rounds 7] \
        [--pyromark-site DIR] [--out benchmarks/results/NAME.json]

The documents are those ``docs_chunk_ab.py`` times: every ``*.md``/``*.markdown`` blob at each
``--repo``'s HEAD (the ``*.rst`` ones do not reach a Markdown parser). Timed, in one process,
the order of the backends rotating each round (CPU seconds, ``time.process_time``):

- ``chunk_document``: the whole chunker as it is (cmark + the Python line/section pass);
- ``cmark_parse_free``: ``cmark_parse_document`` + ``cmark_node_free`` only (the floor of any
  Python around cmark);
- ``cmark_walker``: the parse plus the top-level walk ``parsing.markdown`` does;
- ``heading_rows``: the chunker's whole heading step (walker + titles);
- ``pyromark_events_with_range``: pulldown-cmark (Rust, ``pyromark``) events with byte
  ranges, the only pyromark call that says where a heading is;
- ``pyromark_events`` / ``pyromark_html``: the same parse without ranges (no positions: not
  usable for chunk locators; listed as the parser's own floor).

With pyromark importable (``--pyromark-site`` is put on ``sys.path``), its top-level headings
(level, first line, last line; a heading inside a block quote or list item skipped, as the
chunker does) are compared with cmark's document by document. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_chunk_ab import fuzz_docs, repo_blobs

_CONTAINERS = ("BlockQuote", "List", "Item", "FootnoteDefinition", "DefinitionList",
               "DefinitionListDefinition", "DefinitionListTitle")


def pyromark_headings(pyromark: Any, text: str, data: bytes) -> list[tuple[int, int, int]]:
    """(level, first line, last line) of the top-level headings pulldown-cmark finds (lines
    1-based; ``data`` has no carriage return)."""
    out: list[tuple[int, int, int]] = []
    depth = 0
    for event, span in pyromark.events_with_range(text):
        if not isinstance(event, dict):
            continue
        if "Start" in event:
            start = event["Start"]
            name = start if isinstance(start, str) else next(iter(start))
            if name in _CONTAINERS:
                depth += 1
            elif name == "Heading" and not depth:
                a, b = span["start"], span["end"]
                if data[b - 1 : b] == b"\n":
                    b -= 1  # the range holds the heading's line feed
                level = int(start["Heading"]["level"][1:])
                out.append((level, data.count(b"\n", 0, a) + 1, data.count(b"\n", 0, b) + 1))
        elif "End" in event:
            end = event["End"]
            name = end if isinstance(end, str) else next(iter(end))
            if name in _CONTAINERS:
                depth -= 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fuzz", type=int, default=3000,
                        help="generated hostile documents whose headings are also compared "
                             "(not timed)")
    parser.add_argument("--pyromark-site", help="a folder holding pyromark (pip --target)")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.pyromark_site:
        sys.path.insert(0, args.pyromark_site)
    from cmarkgfm import _cmark

    from gitquarry.parsing import markdown
    from gitquarry.repo_docs.chunker import chunk_document

    blobs = [b for repo in args.repo for b in repo_blobs(repo) if b[1] == "markdown"]
    labels = [label for label, _c, _d in blobs]
    docs = [d for _l, _c, d in blobs]
    texts = [d.decode("utf-8") for d in docs]
    lines = [t.split("\n") for t in texts]
    mib = sum(map(len, docs)) / 2**20
    walker = markdown._tree_walker()
    assert walker is not None
    ffi, lib = _cmark.ffi, _cmark.lib
    free = markdown._exported_functions(_cmark.__file__, ffi)(
        "cmark_node_free", "void (*)(cmark_node *)")
    options = lib.CMARK_OPT_SOURCEPOS
    backends: dict[str, Callable[[], object]] = {
        "chunk_document": lambda: [chunk_document(d, "markdown") for d in docs],
        "cmark_parse_free": lambda: [free(lib.cmark_parse_document(d, len(d), options))
                                     for d in docs],
        "cmark_walker": lambda: [walker(d) for d in docs],
        "heading_rows": lambda: [markdown.heading_rows(t, d, s)
                                 for t, d, s in zip(texts, docs, lines, strict=True)],
    }
    pyromark: Any = None
    try:
        import pyromark as _pyromark

        pyromark = _pyromark
    except ImportError:
        pass
    if pyromark is not None:
        backends["pyromark_events_with_range"] = lambda: [
            list(pyromark.events_with_range(t)) for t in texts]
        backends["pyromark_events"] = lambda: [list(pyromark.events(t)) for t in texts]
        backends["pyromark_html"] = lambda: [pyromark.html(t) for t in texts]
    for run in backends.values():
        run()  # warm: imports, first allocations
    names = list(backends)
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            started = time.process_time()
            backends[name]()
            cpu[name].append(time.process_time() - started)
    result: dict[str, object] = {
        "markdown_files": len(docs), "mib": round(mib, 2), "rounds": args.rounds,
        "cpu_s_median": {n: round(statistics.median(v), 4) for n, v in cpu.items()},
        "cpu_s_min": {n: round(min(v), 4) for n, v in cpu.items()},
        "mib_per_cpu_s_median": {n: round(mib / statistics.median(v), 2)
                                 for n, v in cpu.items()},
        "load_1min_end": round(os.getloadavg()[0], 2),
    }
    if pyromark is not None:
        from importlib.metadata import version

        result["pyromark_version"] = version("pyromark")
        differ: list[int] = []
        differ_starts: list[int] = []
        compared = 0
        for i, (text, data) in enumerate(zip(texts, docs, strict=True)):
            if "\r" in text:
                continue  # CR line endings: counted apart here; not worth the mapping
            compared += 1
            source = text.split("\n")
            cmark_rows = []
            for level, start, end in walker(data):
                if end > start:  # cmark's setext end may run past the underline (as in
                    # ``heading_rows``): the first underline-like line after the start
                    end = next((n for n in range(start + 1, end + 1)
                                if markdown._UNDERLINE.match(source[n - 1])), end)
                cmark_rows.append((level, start, end))
            theirs = pyromark_headings(pyromark, text, data)
            if theirs != cmark_rows:
                differ.append(i)
            if [r[:2] for r in theirs] != [r[:2] for r in cmark_rows]:
                differ_starts.append(i)
        result["headings_compared_files"] = compared
        result["headings_differing_files"] = len(differ)
        result["headings_differing_level_or_start_files"] = len(differ_starts)
        result["headings_differing_examples"] = [
            (labels[i], walker(docs[i])[:3], pyromark_headings(pyromark, texts[i], docs[i])[:3])
            for i in differ[:5]]
        # the hostile set: (level, first line) only (cmark's setext end is corrected above)
        fuzz = [(label, d) for label, cls, d in fuzz_docs(args.fuzz)
                if cls == "markdown" and b"\r" not in d]
        fuzz_differ = []
        fuzz_compared = 0
        for label, data in fuzz:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue  # the chunker raises on such a file before any parser runs
            fuzz_compared += 1
            ours = [r[:2] for r in walker(data)]
            if [r[:2] for r in pyromark_headings(pyromark, text, data)] != ours:
                fuzz_differ.append(label)
        result["fuzz_headings_compared_files"] = fuzz_compared
        result["fuzz_headings_differing_level_or_start_files"] = len(fuzz_differ)
        result["fuzz_headings_differing_examples"] = fuzz_differ[:10]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
