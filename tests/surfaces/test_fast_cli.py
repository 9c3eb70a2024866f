"""The command-line fast path (``cli/fast.py``) prints exactly what the Typer app prints.

A property test: seeded-random ``history`` command lines (24 in the default run, 100 more
in the slow set; valid and invalid values, every spelling of every option, options before
and after QUERY, ``--``, ``--help``, unknown options, JSON and text output) run through the
Typer app (``cli.app.main``) and through the console entry (``cli.entry.main``: fast path
first, Typer app when it does not answer) on a real indexed repository; stdout, stderr and
exit code must be equal. Two values are the call's own and differ between any two runs of
the same command: ``index_state.checked_at`` (the clock, in seconds) and the random pin id
of ``next_cursor``; they are replaced by placeholders before comparing (their presence and
shape are still compared).

Also: every command line of accepted values with ``--json`` that succeeds is answered by the
fast path itself (it does not fall through), the fast path's option table is the Typer
command's, and a fresh interpreter answering ``history --json`` imports none of Typer,
Click, Rich, pydantic or NumPy.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.surfaces.conftest import Repo

_CHECKED_AT = re.compile(r'"checked_at": [0-9]+')
_CURSOR = re.compile(r'"next_cursor": "[A-Za-z0-9_-]{16}\.')


def _normalise(text: str) -> str:
    text = _CHECKED_AT.sub('"checked_at": <now>', text)
    return _CURSOR.sub('"next_cursor": "<pin>.', text)


@pytest.fixture()
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of one real repository: 14 commits on two branches and a merge, files
    under src/ and docs/, two authors, a tag; indexed without vectors."""
    ws = tmp_path_factory.mktemp("fastws")
    repo = Repo(ws / "app")
    subjects = ["fix cache timeout in parser", "add auth token refresh", "docs: explain cache",
                "parser error on empty input", "refactor cache layer", "über-fix for tokens",
                "bump version", "timeout handling for auth"]
    for n, subject in enumerate(subjects):
        folder = "docs" if "docs" in subject else "src"
        ext = "md" if folder == "docs" else "py"
        repo.commit(f"{subject}\n\nBody {n} mentions cache and parser.",
                    {f"{folder}/m{n % 3}.{ext}": f"value = {n}  # cache {n}\n"})
    repo.git("checkout", "-q", "-b", "feature")
    for n in range(3):
        repo.commit(f"feature: cache warmup step {n}", {f"src/feat{n}.py": f"step = {n}\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("auth: rotate token keys", {"src/auth.py": "rotate = True\n"})
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")
    repo.git("tag", "v1.0")
    repo.commit("fix parser cache regression", {"src/m0.py": "value = 99\n"})
    (ws / "app" / "notes.txt").write_text("a file, not a directory\n", encoding="utf-8")
    (ws / "sub").mkdir()
    return ws


@pytest.fixture()
def run_paths(workspace: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """(typer(argv), entry(argv), fast(argv)) → (exit code, stdout, stderr) in ``workspace``
    (``fast``: ``try_fast`` alone; exit code None when it did not answer)."""
    from gitquarry.cli.app import main as typer_main
    from gitquarry.cli.entry import main as entry_main
    from gitquarry.cli.fast import try_fast

    monkeypatch.chdir(workspace)
    monkeypatch.setenv("GITQUARRY_FAST", "local")
    if not (workspace / ".gitquarry").exists():
        with pytest.raises(SystemExit) as done:
            typer_main(["index", "--no-embed", "-q", str(workspace)])
        assert done.value.code in (0, None)

    def call(fn, argv: list[str]) -> tuple[int | None, str, str]:  # type: ignore[no-untyped-def]
        capsys.readouterr()
        code: int | None
        try:
            answered = fn(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        else:
            code = None if answered is False else 0
        out, err = capsys.readouterr()
        return code, _normalise(out), err

    return (lambda a: call(typer_main, a), lambda a: call(entry_main, a),
            lambda a: call(try_fast, a))


#: value pools per option: valid values first, then values the command refuses
POOLS: dict[str, tuple[list[str], list[str]]] = {
    "--files-glob": (["src/**", "*.md", "docs", "src/*.py"], ["[", ""]),
    # no relative time ("yesterday"): its bound is the call's clock, like checked_at
    "--after": (["2024-01-01", "1704067300", "2023-12-31T23:59Z"], ["garbage"]),
    "--before": (["2024-01-01", "2030-01-01", "20240101"], ["not a date"]),
    "--author": (["ada", "ADA", "nobody"], []),
    "--committer": (["cy", "x"], []),
    "--path": (["src", "docs/m2.md", "nope"], [""]),
    "--pickaxe": (["cache", "zzz"], []),
    "--top-n": (["1", "3", "100", "007"], ["0", "101", "x", "1.5", "+3"]),
    "--mode": (["lexical", "hybrid", "semantic"], ["bogus"]),
    "--detail": (["full", "compact", "ids"], ["bad"]),
    "--max-tokens": (["500", "2000", "100000"], ["100", "abc"]),
    "--sort": (["relevance", "newest", "oldest"], ["x"]),
    "--min-score": (["0.1", "0.5", ".2", "1"], ["2", "abc", "nan"]),
    "--cursor": ([], ["bogus", "AAAAAAAAAAAAAAAA.3"]),
}
ALIASES = {"--files-glob": ["-g"], "--after": ["--since"], "--before": ["--until"],
           "--pickaxe": ["-S"], "--top-n": ["-n"], "--mode": ["-m"], "--project": ["-p"]}
FLAGS = ["--merges", "--no-merges", "--explain", "--no-collapse", "--diverse"]
QUERIES = ["cache", "auth token", "fix parser", "nothing-zzz-matches", "über", "refactor"]


def _option(rng: random.Random, name: str, value: str) -> list[str]:
    spelled = rng.choice([name, *ALIASES.get(name, [])])
    if spelled.startswith("--") and rng.random() < 0.3:
        return [f"{spelled}={value}"]
    return [spelled, value]


def command_line(rng: random.Random, workspace: Path, *, valid: bool) -> list[str]:
    """One random ``history`` command line (``valid``: only accepted values, ``--json``)."""
    pieces: list[list[str]] = []
    for name in rng.sample(sorted(POOLS), rng.randint(0, 4)):
        good, bad = POOLS[name]
        pool = good if valid or not bad else (bad if rng.random() < 0.5 or not good else good)
        if pool:
            pieces.append(_option(rng, name, rng.choice(pool)))
    for flag in rng.sample(FLAGS, rng.randint(0, 2)):
        pieces.append([flag])
    if rng.random() < 0.3:
        target = rng.choice([str(workspace), str(workspace / "sub"), "sub", "."]
                            + ([] if valid else ["/nonexistent-gq", str(workspace / "app"
                                                                         / "notes.txt")]))
        pieces.append(_option(rng, "--project", target))
    if rng.random() < 0.15:  # a repeated option: the last one wins
        pieces.append(_option(rng, "--top-n", rng.choice(["2", "5"])))
    if valid or rng.random() < 0.8:
        pieces.append(["--json"])
    if not valid:
        extra = rng.choice([[], [], ["--help"], ["-h"], ["--bogus"], ["-n5"], ["--json=1"],
                            ["extra-positional"], ["--author", "--json"], ["--top-n"]])
        if extra:
            pieces.append(extra)
    rng.shuffle(pieces)
    query = rng.choice(QUERIES)
    if rng.random() < 0.1:
        pieces.append(["--", query])
    else:  # between two options (never between an option and its value)
        pieces.insert(rng.randint(0, len(pieces)), [query])
    return ["history", *(token for piece in pieces for token in piece)]


def _compare(run_paths, workspace: Path, seed: int, each: int) -> None:  # type: ignore[no-untyped-def]
    """``each`` accepted and ``each`` mixed command lines through all three paths."""
    typer_run, entry_run, fast_run = run_paths
    rng = random.Random(seed)
    answered = 0
    cases = [(command_line(rng, workspace, valid=True), True) for _ in range(each)]
    cases += [(command_line(rng, workspace, valid=False), False) for _ in range(each)]
    for argv, valid in cases:
        expected = typer_run(argv)
        got = entry_run(argv)
        assert got == expected, argv
        fast = fast_run(argv)
        if fast[0] is not None:
            answered += 1
            assert fast == expected, argv
        elif valid and expected[0] == 0:
            pytest.fail(f"the fast path did not answer a valid command line: {argv} "
                        f"(Typer: {expected})")
    assert answered >= each * 3 // 5  # every valid one that succeeds


def test_fast_path_prints_what_typer_prints(workspace: Path, run_paths) -> None:  # type: ignore[no-untyped-def]
    _compare(run_paths, workspace, 2112, 12)


@pytest.mark.slow
@pytest.mark.timeout(900)  # 100 command lines, three runs each, in-process
def test_fast_path_prints_what_typer_prints_many(workspace: Path, run_paths) -> None:  # type: ignore[no-untyped-def]
    _compare(run_paths, workspace, 2113, 50)


def test_a_cursor_page_is_the_same_on_both_paths(workspace: Path, run_paths) -> None:  # type: ignore[no-untyped-def]
    typer_run, _entry_run, fast_run = run_paths
    from gitquarry.cli.fast import HistoryArgs, history_answer

    # the pin id is hidden by the placeholder in the compared output: make one here

    data, _warnings = history_answer(HistoryArgs(query="cache", top_n=2, as_json=True))
    cursor = data["next_cursor"]
    assert cursor
    for extra in ([], ["--detail", "compact"], ["--max-tokens", "800"]):
        argv = ["history", "cache", "--json", "-n", "2", "--cursor", cursor, *extra]
        expected = typer_run(argv)
        assert expected[0] == 0, expected
        assert fast_run(argv) == expected, argv


def test_every_cursor_the_store_makes_is_taken_by_the_fast_path(tmp_path: Path) -> None:
    """The intermittent failure of the test above (CI, 2 December): pin ids were
    ``secrets.token_urlsafe`` text, which starts with ``-`` once in 64; the fast path leaves
    a dash-led option value to Click, so that cursor's page fell back to the Typer app.
    Checked on 4,000 real pin ids (the old generator fails this with probability
    1 - (63/64)**4000, about 1 - 1e-27); the pins are kept in memory (a ``cursors.db`` that
    is a link is never opened), so this costs no disk writes."""
    from gitquarry.cli.fast import parse_history
    from gitquarry.history.answers.cursor import CursorStore, make_cursor, parse_cursor

    (tmp_path / "elsewhere.db").write_bytes(b"")
    os.symlink(tmp_path / "elsewhere.db", tmp_path / "cursors.db")
    store = CursorStore(tmp_path)
    try:
        assert not store.persistent
        for _ in range(4000):
            cursor = make_cursor(store.pin([], "params", {}), 2)
            assert cursor[0].isascii() and cursor[0].isalnum(), cursor
            assert parse_cursor(cursor)[1] == 2
            args = parse_history(["history", "cache", "--json", "--cursor", cursor])
            assert args is not None and args.cursor == cursor, cursor
    finally:
        store.close()


def test_a_cursor_of_the_old_alphabet_is_still_accepted(workspace: Path, run_paths) -> None:  # type: ignore[no-untyped-def]
    """Cursors issued before the change (``_`` and ``-`` inside) still page; one starting
    with ``-`` is read by Click (the Typer app) as before: ``--cursor=-…`` and ``--cursor -…``
    give the same page."""
    typer_run, _entry_run, _fast_run = run_paths
    import sqlite3

    from gitquarry.cli.fast import HistoryArgs, history_answer

    data, _warnings = history_answer(HistoryArgs(query="cache", top_n=2, as_json=True))
    pin_id, offset = data["next_cursor"].split(".")
    old = "-_" + pin_id[2:]
    with sqlite3.connect(workspace / ".gitquarry" / "cursors.db") as conn:
        conn.execute("UPDATE pins SET id = ? WHERE id = ?", (old, pin_id))
    conn.close()
    glued = typer_run(["history", "cache", "--json", "-n", "2", f"--cursor={old}.{offset}"])
    spaced = typer_run(["history", "cache", "--json", "-n", "2", "--cursor", f"{old}.{offset}"])
    assert glued[0] == 0, glued
    assert spaced == glued
    assert '"results": [\n' in glued[1] and '"hash": "' in glued[1]  # a page, not empty


def test_option_table_is_the_typer_commands() -> None:
    from typer.main import get_command

    from gitquarry.cli.app import app
    from gitquarry.cli.fast import FLAG_OPTIONS, VALUE_OPTIONS

    command = get_command(app).commands["history"]  # type: ignore[attr-defined]
    values: dict[str, str] = {}
    flags: dict[str, tuple[str, bool]] = {}
    for param in command.params:
        if param.param_type_name != "option":
            continue
        if param.is_flag:
            for spelling in param.opts:
                flags[spelling] = (param.name, True)
            for spelling in param.secondary_opts:
                flags[spelling] = (param.name, False)
        else:
            for spelling in (*param.opts, *param.secondary_opts):
                values[spelling] = param.name
    assert values == VALUE_OPTIONS
    assert flags == FLAG_OPTIONS


def test_fast_history_imports_no_framework(workspace: Path, run_paths) -> None:  # type: ignore[no-untyped-def]
    typer_run, _entry, _fast = run_paths
    assert typer_run(["history", "cache", "--json"])[0] == 0  # the index exists
    probe = ("import json, sys\nfrom gitquarry.cli.entry import main\n"
             "try:\n    main(['history', 'cache', '--json', '--mode', 'lexical'])\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "names = ('typer', 'click', 'rich', 'pydantic', 'numpy', 'onnxruntime')\n"
             "sys.stderr.write('LOADED ' + json.dumps([n for n in names if n in sys.modules])"
             " + ' CODE ' + str(code) + '\\n')\n")
    env = {**os.environ, "GITQUARRY_FAST": "local"}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    tail = proc.stderr.rsplit("LOADED ", 1)[-1]
    assert tail.strip() == "[] CODE 0", proc.stderr[-2000:]
    assert json.loads(proc.stdout)["results"]
