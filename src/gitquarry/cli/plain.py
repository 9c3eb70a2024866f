"""Output helpers that need neither Typer nor Rich: the escaping of terminal text, the JSON
writer and the logging set-up of the ``gitquarry`` command.

They live here (``cli.common`` and ``cli.app`` re-export them) so the command-line fast path
(``cli.fast``) and the daemon's search answer (``cli.daemon_search``) print exactly the bytes
the Typer commands print, without importing the framework (issue 21 §1).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

#: Unicode bidirectional controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI): they reorder what a
#: terminal shows ("Trojan Source"), so repository text never reaches one with them raw
BIDI_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))

#: JSON leaves DEL, the C1 controls (U+0080-U+009F, e.g. CSI) and the bidi controls raw;
#: write them as \\u escapes
JSON_CONTROL = {i: f"\\u{i:04x}" for i in (0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS)}


def json_text(data: Any) -> str:
    """``data`` as the pretty JSON :func:`print_json` writes (without the final newline):
    UTF-8 text, control characters escaped (C0 by JSON itself, DEL, C1 and bidi controls
    here)."""
    return json.dumps(data, indent=2, ensure_ascii=False).translate(JSON_CONTROL)


def print_json(data: Any) -> None:
    """Write ``data`` as pretty JSON to stdout (UTF-8, no ASCII escaping except control
    characters: JSON escapes C0 itself, DEL, C1 and bidi controls are escaped here, so JSON
    printed to a terminal cannot drive or reorder it; the decoded values are unchanged)."""
    sys.stdout.write(json_text(data) + "\n")
    sys.stdout.flush()


_CONTROL = {i: f"\\x{i:02x}" for i in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F)}
_CONTROL.update({0x0A: "\\n", 0x0D: "\\r"})
_CONTROL.update({i: f"\\x{i:02x}" for i in range(0x80, 0xA0)})  # C1 controls (e.g. CSI)
_CONTROL.update({i: f"\\u{i:04x}" for i in BIDI_CONTROLS})


def printable(text: str) -> str:
    """``text`` with control characters (C0 except tab, DEL, C1) shown as ``\\xNN`` / ``\\n``
    escapes and bidi controls as ``\\uNNNN``, for human output: commit text and file names
    may hold terminal escape sequences, bidi reordering or newlines that must not reach the
    terminal raw. JSON output is unaffected."""
    return text.translate(_CONTROL)


def configure_logging() -> None:
    """Library warnings are summarised by the commands themselves; the raw log lines go to
    stderr only at ``GITQUARRY_LOG=info|warning|debug``."""

    class EscapingFormatter(logging.Formatter):
        """Log lines carry repository paths and commit text: escaped like all output."""

        def formatMessage(self, record: logging.LogRecord) -> str:
            return printable(super().formatMessage(record))

    level = os.environ.get("GITQUARRY_LOG", "error").upper()
    handler = logging.StreamHandler()
    handler.setFormatter(EscapingFormatter("gitquarry %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level, logging.ERROR), handlers=[handler])
