"""``gitquarry index`` without Typer (``cli/fast_index.py``) does what the Typer app does.

Each command line runs twice in a fresh process through the console entry (``python -m
gitquarry``), on two identical copies of a workspace: once with ``GITQUARRY_FAST=0`` (the
Typer app) and once as shipped (the fast path first). Compared: exit code, stdout, stderr
(timings replaced by a placeholder) and every row of the index written
(``benchmarks/index_rows.py``). The cases: a first run and a second (up-to-date) run with
and without ``-q``, ``--no-embed`` (its hint), ``--json``, no PATH (the working directory),
PATH with a trailing slash, a folder with no repository, a repository with a broken ref (its
warning), a corrupt index (the storage error and its exit code), and command lines the fast
path must not take (``--help``, ``--watch``, an unknown option, a file or a missing path as
PATH, ``--color``, ``--``). Also: the fast path took exactly the command lines it should
(Typer is imported in the process only when it did not).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from tests.surfaces.conftest import Repo

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from index_rows import digests, rows

_TIMES = re.compile(r"[0-9]+\.[0-9]+ s\b")
_SECONDS = re.compile(r'"seconds": [0-9.e-]+')
#: run the entry point, then record whether Typer was imported (the marker file)
_RUN = ("import atexit, sys\n"
        "mark = sys.argv.pop(1)\n"
        "atexit.register(lambda: open(mark, 'w').write(str('typer' in sys.modules)))\n"
        "from gitquarry.cli.entry import main\n"
        "main(sys.argv[1:])\n")


def _build(ws: Path) -> None:
    repo = Repo(ws / "app")
    for n in range(6):
        repo.commit(f"change {n}: parseConfigFile step {n}", {f"src/m{n % 2}.py": f"v = {n}\n"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("topic work", {"src/topic.py": "t = 1\n"})
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "topic", "-m", "Merge branch 'topic'")
    (ws / "notes.txt").write_text("a file\n", encoding="utf-8")
    (ws / "empty").mkdir()


def _broken_ref(ws: Path) -> None:
    (ws / "app" / ".git" / "refs" / "heads" / "broken").write_text("1" * 40 + "\n")


def _corrupt(ws: Path) -> None:
    db = ws / ".gitquarry" / "index.db"
    db.parent.mkdir(exist_ok=True)
    db.write_bytes(b"this is not a database" * 100)


def _run(ws: Path, argv: list[str], *, fast: bool, cwd: Path, mark: Path) -> tuple[int, str, str]:
    import gitquarry

    # this tree's gitquarry in the child whatever its working directory (PYTHONPATH=src)
    env = {**os.environ, "GITQUARRY_FAST": "1" if fast else "0",
           "PYTHONPATH": str(Path(gitquarry.__file__).resolve().parents[1])}
    env.pop("GITQUARRY_LOG", None)
    argv = [a.replace("{ws}", str(ws)) for a in argv]
    proc = subprocess.run([sys.executable, "-c", _RUN, str(mark), *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    clean = [(s.replace(str(ws), "{ws}"), ) for s in (proc.stdout, proc.stderr)]
    out, err = (_SECONDS.sub('"seconds": <t>', _TIMES.sub("<t> s", c[0])) for c in clean)
    return proc.returncode, out, err


#: (command line, prepare the workspace copy before it, run a first index before it,
#: the fast path takes it)
CASES: list[tuple[list[str], str, bool, bool]] = [
    (["index", "--no-embed", "{ws}"], "", False, True),
    (["index", "--no-embed", "-q", "{ws}"], "", False, True),
    (["index", "--no-embed", "{ws}"], "", True, True),
    (["index", "--no-embed", "--quiet", "--no-embed", "{ws}/"], "", True, True),
    (["index", "--json", "--no-embed", "{ws}"], "", False, True),
    (["index", "--json", "-q", "--no-embed", "{ws}"], "", True, True),
    (["index", "--no-embed"], "", False, True),
    (["index", "-q", "--no-embed", "{ws}/empty"], "", False, True),
    (["index", "--no-embed", "{ws}"], "broken", False, True),
    (["index", "--no-embed", "{ws}"], "corrupt", False, True),
    (["index", "--json", "--no-embed", "{ws}"], "corrupt", False, True),
    (["index", "--help"], "", False, False),
    (["index", "--no-embed", "--watch", "{ws}/nonexistent"], "", False, False),
    (["index", "--no-embed", "--bogus", "{ws}"], "", False, False),
    (["index", "--no-embed", "{ws}/notes.txt"], "", False, False),
    (["index", "--no-embed", "{ws}/nonexistent"], "", False, False),
    (["--color", "never", "index", "--no-embed", "-q", "{ws}"], "", False, False),
    (["index", "--no-embed", "--", "{ws}"], "", False, False),
    (["index", "--no-embed", "{ws}", "{ws}"], "", False, False),
]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_fast_index_equals_the_typer_path(case: int, tmp_path: Path) -> None:
    argv, prepare, first, taken = CASES[case]
    template = tmp_path / "template"
    _build(template)
    results = []
    for fast in (False, True):
        ws = tmp_path / ("fast" if fast else "typer")
        shutil.copytree(template, ws, symlinks=True)
        if prepare == "broken":
            _broken_ref(ws)
        mark = tmp_path / f"mark-{fast}"
        if first:
            assert _run(ws, ["index", "--no-embed", "-q", "{ws}"], fast=False, cwd=ws,
                        mark=mark)[0] == 0
        if prepare == "corrupt":
            _corrupt(ws)
        got = _run(ws, argv, fast=fast, cwd=ws, mark=mark)
        typer_loaded = mark.read_text() == "True"
        db = ws / ".gitquarry" / "index.db"
        table_rows = None
        if db.exists() and prepare != "corrupt":
            with sqlite3.connect(db) as conn:
                table_rows = digests(rows(conn))["all"]
        results.append((got, table_rows))
        if fast and prepare == "corrupt":
            assert typer_loaded  # the fast path's error goes to cli.app.fail_for
        elif fast:
            assert typer_loaded is not taken, (argv, got)
        else:
            assert typer_loaded
    assert results[0] == results[1], argv
    (code, out, err), _ = results[0]
    if argv == ["index", "--no-embed", "{ws}"] and not first and not prepare:
        assert code == 0 and "hint: keyword search works now" in err and "Indexed 8" in out
    if prepare == "corrupt":
        assert code != 0 and "Error:" in err
    if prepare == "broken":
        assert "Warning:" in err
