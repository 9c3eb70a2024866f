"""Write (or check) the key table of docs/configuration.md from ``gitquarry.config.SETTINGS``.

Usage::

    python tools/config_table.py          # rewrite the table between the markers
    python tools/config_table.py --check  # exit 1 when the table is out of date

The table sits between ``<!-- keys:start -->`` and ``<!-- keys:end -->``; one row per key:
name, type, default, range (the declared checks and choices), who may set it, meaning.
``tests/test_config_declarations.py`` checks it is up to date.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path

from gitquarry.config import SETTINGS, Owner, Setting, _describe

DOC = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
START, END = "<!-- keys:start -->", "<!-- keys:end -->"

_WHO = {
    Owner.REPOSITORY: "any file",
    Owner.REPOSITORY_PATH: "any file (a workspace's: inside it)",
    Owner.USER: "your file, a trusted workspace's",
    Owner.USER_FILE: "your file only",
}


def _cell(text: str) -> str:
    return text.replace("``", "`").replace("|", "\\|").replace("\n", " ")


def _type(setting: Setting) -> str:
    if typing.get_origin(setting.type) is list:
        return "list of strings"
    return _describe(setting.type)


def _default(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and len(value) > 3:
        return f"{len(value)} globs (see above)"
    return json.dumps(value)


def _range(setting: Setting) -> str:
    rules = [c.why.removeprefix("must be ") for c in setting.checks if c.name is None]
    rules += [f"{c.name} {c.why}" for c in setting.checks if c.name is not None]
    return "; ".join(dict.fromkeys(rules))


def table() -> str:
    """The markdown table, one row per declared key (no markers)."""
    rows = ["| Key | Type | Default | Range | Set by | Meaning |",
            "| --- | --- | --- | --- | --- | --- |"]
    for s in SETTINGS:
        rows.append("| " + " | ".join(_cell(c) for c in (
            f"`{s.name}`", _type(s), f"`{_default(s.default)}`", _range(s),
            _WHO[s.owner], s.help)) + " |")
    return "\n".join(rows)


def render(doc: str) -> str:
    """``doc`` with the table between the markers replaced. :raises ValueError: no markers."""
    head, start, rest = doc.partition(START)
    _old, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{DOC} has no {START} … {END} markers")
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    doc = DOC.read_text(encoding="utf-8")
    new = render(doc)
    if "--check" in argv:
        if new != doc:
            print(f"{DOC} is out of date: run python tools/config_table.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
