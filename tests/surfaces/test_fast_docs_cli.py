"""The docs fast path (``cli/fast_docs.py``) prints exactly what the Typer app prints.

A property test, as ``test_fast_cli.py`` is for ``history``: seeded-random ``repo-docs
search`` command lines (valid and invalid values, every option, options before and after
QUERY, ``--``, ``--help``, unknown options, JSON and text output) run through the Typer app
(``cli.app.main``) and through the console entry (``cli.entry.main``: fast path first, Typer
app when it does not answer) on real registered repositories (two, so a missing ``--repo``
is an error; one with an indexed revision set, one without); stdout, stderr and exit code
must be equal. Also: every accepted ``--json`` command line that succeeds is answered by the
fast path itself, the option table is the Typer command's, and a fresh interpreter
answering ``repo-docs search --json`` imports none of Typer, Click, Rich, pydantic or NumPy.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from tests.surfaces.conftest import Repo

DOCS = {
    "README.md": "# Widget\n\nWidget renders dashboards for the ops team.\n",
    "docs/deploy.md": (
        "# Deployment\n\nHow we ship.\n\n## Nginx\n\nThe reverse proxy terminates TLS and "
        "forwards to the gunicorn workers.\n\n### Configuration\n\nSet worker_connections to "
        "4096 in the events block.\n\n## Rollback\n\nRun the blue-green switch script to "
        "return traffic to the previous colour. Über-careful rollback of the proxy.\n"),
    "docs/guide.rst": (
        "=====\nGuide\n=====\n\nIntro text about the proxy.\n\nInstalling\n----------\n\n"
        "Use pipx to install the command line tool.\n\n.. code-block:: bash\n\n"
        "   pipx install widget\n"),
    "docs/notes.txt": "Plain notes: the dashboards cache tokens for an hour.\n",
    "src/app.py": "print('not docs')\n",
}


@pytest.fixture()
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """Two registered repositories (``acme/widget`` indexed, ``acme/other`` not) and a
    state dir of their own; the embedding provider off (full text only, no model)."""
    from gitquarry.cli.app import main as typer_main

    config = tmp_path / "c.toml"
    config.write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    monkeypatch.setenv("GITQUARRY_CONFIG", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("GITQUARRY_FAST", "local")
    monkeypatch.chdir(tmp_path)
    widget = Repo(tmp_path / "widget")
    first = widget.commit("initial docs", dict(DOCS))
    widget.commit("more docs", {"docs/deploy.md": DOCS["docs/deploy.md"]
                                + "\n## Scaling\n\nAdd gunicorn workers per core.\n"})
    other = Repo(tmp_path / "other")
    other.commit("docs", {"README.md": "# Other\n\nA proxy cache for tokens.\n"})
    for name, repo in (("acme/widget", widget), ("acme/other", other)):
        with pytest.raises(SystemExit) as done:
            typer_main(["repo-docs", "register", "--repo", name, "--repository-path",
                        str(repo.path)])
        assert done.value.code in (0, None)
    with pytest.raises(SystemExit) as done:
        typer_main(["repo-docs", "index", "--repo", "acme/widget", "--foreground", "--json"])
    assert done.value.code in (0, None)
    # the worktree overlay: a tracked file changed, not committed
    (widget.path / "docs" / "notes.txt").write_text("Plain notes: the proxy cache.\n",
                                                    encoding="utf-8")
    capsys.readouterr()
    return {"first": first}


def _call(fn, argv: list[str], capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
          ) -> tuple[int | None, str, str]:
    capsys.readouterr()
    code: int | None
    try:
        answered = fn(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    else:
        code = None if answered is False else 0
    out, err = capsys.readouterr()
    return code, out, err


#: value pools per option: valid values first, then values the command refuses
POOLS: dict[str, tuple[list[str], list[str]]] = {
    "--repo": (["acme/widget"], ["acme/nope", "", "acme/other"]),
    "--mode": (["fulltext", "hybrid"], ["semantic", ""]),
    "--limit": (["1", "3", "50", "007"], ["0", "51", "x", "+3", "1_0"]),
    "--min-score": (["0", "0.2", ".5", "1"], ["2", "abc", "1e-3", "nan"]),
    "--max-tokens": (["500", "2000"], ["100", "abc"]),
    "--revision": (["HEAD", "HEAD~1", "main"], ["nope-branch", "HEAD~9"]),
    "--registration-id": ([], ["reg-bogus"]),
    "--source-registration-id": ([], ["src-bogus"]),
    "--source-registration-generation": ([], ["1", "x", "7"]),
}
FLAGS = ["--include-worktree", "--diverse", "--explain"]
QUERIES = ["gunicorn workers", "proxy", "rollback", "zzqqxx-nothing", "über", "cache tokens",
           "install", "   "]


def command_line(rng: random.Random, *, valid: bool) -> list[str]:
    """One random ``repo-docs search`` command line (``valid``: only accepted values and
    ``--json``; ``--repo acme/widget`` always, two repositories being registered)."""
    pieces: list[list[str]] = [["--repo", "acme/widget"]] if valid else []
    for name in rng.sample(sorted(POOLS), rng.randint(0, 4)):
        good, bad = POOLS[name]
        pool = good if valid or not bad else (bad if rng.random() < 0.5 or not good else good)
        if valid and name == "--repo":
            continue
        if pool:
            value = rng.choice(pool)
            pieces.append([f"{name}={value}"] if rng.random() < 0.3 else [name, value])
    for flag in rng.sample(FLAGS, rng.randint(0, 2)):
        pieces.append([flag])
    if rng.random() < 0.15:  # a repeated option: the last one wins
        pieces.append(["--limit", rng.choice(["2", "5"])])
    if valid or rng.random() < 0.8:
        pieces.append(["--json"])
    if not valid:
        extra = rng.choice([[], [], ["--help"], ["-h"], ["--bogus"], ["--json=1"],
                            ["extra-positional"], ["--repo", "--json"], ["--limit"],
                            ["--repo", "acme/widget"], ["--repo", "acme/widget"]])
        if extra:
            pieces.append(extra)
    rng.shuffle(pieces)
    query = rng.choice(QUERIES[:-1] if valid else QUERIES)
    if rng.random() < 0.1:
        pieces.append(["--", query])
    else:  # between two options (never between an option and its value)
        pieces.insert(rng.randint(0, len(pieces)), [query])
    return ["repo-docs", "search", *(token for piece in pieces for token in piece)]


def _compare(capsys: pytest.CaptureFixture[str], seed: int, each: int) -> None:
    from gitquarry.cli.app import main as typer_main
    from gitquarry.cli.entry import main as entry_main
    from gitquarry.cli.fast_docs import try_fast_docs

    rng = random.Random(seed)
    answered = 0
    cases = [(command_line(rng, valid=True), True) for _ in range(each)]
    cases += [(command_line(rng, valid=False), False) for _ in range(each)]
    for argv, valid in cases:
        expected = _call(typer_main, argv, capsys)
        got = _call(entry_main, argv, capsys)
        assert got == expected, argv
        fast = _call(try_fast_docs, argv, capsys)
        if fast[0] is not None:
            answered += 1
            assert fast == expected, argv
        elif valid and expected[0] == 0:
            pytest.fail(f"the fast path did not answer a valid command line: {argv} "
                        f"(Typer: {expected})")
    assert answered >= each * 3 // 5  # every valid one that succeeds


def test_fast_docs_path_prints_what_typer_prints(registered: dict[str, str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _compare(capsys, 2112, 14)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_fast_docs_path_prints_what_typer_prints_many(
        registered: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    _compare(capsys, 2113, 50)


def test_fixed_command_lines_are_the_same(registered: dict[str, str],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The cases a random draw may miss: every revision spelling, the overlay, an unknown
    selector, a missing ``--repo`` with two registered, a hit list cut by ``--max-tokens``."""
    from gitquarry.cli.app import main as typer_main
    from gitquarry.cli.entry import main as entry_main

    lines = [
        ["--repo", "acme/widget", "--json"],
        ["--repo", "acme/widget", "--json", "--revision", registered["first"]],
        ["--repo", "acme/widget", "--json", "--revision", registered["first"][:10]],
        ["--repo", "acme/widget", "--json", "--include-worktree"],
        ["--repo", "acme/widget", "--json", "--include-worktree", "--mode", "fulltext"],
        ["--repo", "acme/widget", "--json", "--max-tokens", "500", "--limit", "50"],
        ["--repo", "acme/other", "--json", "--explain"],
        ["--json"],
        ["--repo", "acme/widget", "--json", "--registration-id", "reg-bogus"],
        ["--repo", "acme/widget", "--json", "--revision", ""],
        ["--repo", "acme/widget"],
    ]
    for tail in lines:
        for query in ("proxy", "gunicorn workers"):
            argv = ["repo-docs", "search", query, *tail]
            expected = _call(typer_main, argv, capsys)
            assert _call(entry_main, argv, capsys) == expected, argv


def test_option_table_is_the_typer_commands() -> None:
    from typer.main import get_command

    from gitquarry.cli.app import app
    from gitquarry.cli.fast_docs import DEFAULTS, FLAG_OPTIONS, VALUE_OPTIONS

    group = get_command(app).commands["repo-docs"]  # type: ignore[attr-defined]
    command = group.commands["search"]
    values: dict[str, str] = {}
    flags: dict[str, tuple[str, bool]] = {}
    names = set()
    for param in command.params:
        names.add(param.name)
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
    assert names == set(DEFAULTS)


def test_fast_docs_imports_no_framework(registered: dict[str, str]) -> None:
    probe = ("import json, sys\nfrom gitquarry.cli.entry import main\n"
             "try:\n    main(['repo-docs', 'search', 'proxy', '--repo', 'acme/widget', "
             "'--json', '--mode', 'fulltext'])\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "names = ('typer', 'click', 'rich', 'pydantic', 'numpy', 'onnxruntime')\n"
             "sys.stderr.write('LOADED ' + json.dumps([n for n in names if n in sys.modules])"
             " + ' CODE ' + str(code) + '\\n')\n")
    proc = subprocess.run([sys.executable, "-c", probe], env=dict(os.environ),
                          capture_output=True, text=True, timeout=120, check=False)
    tail = proc.stderr.rsplit("LOADED ", 1)[-1]
    assert tail.strip() == "[] CODE 0", proc.stderr[-2000:]
    assert json.loads(proc.stdout)["hits"]
