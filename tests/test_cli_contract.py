"""CLI contract: every command has help and is documented in README.md; usage errors exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.main import get_command

from gitquarry.cli.app import app, main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _commands() -> list[list[str]]:
    root = get_command(app)
    out: list[list[str]] = []
    for name, cmd in root.commands.items():  # type: ignore[attr-defined]
        sub = getattr(cmd, "commands", None)
        if sub:
            out.extend([name, child] for child in sub)
        else:
            out.append([name])
    return out


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    captured = capsys.readouterr()
    return int(exc.value.code or 0), captured.out, captured.err


def test_every_command_is_listed() -> None:
    names = {" ".join(c) for c in _commands()}
    expected = {"index", "history", "status", "rebuild-index", "search", "graph reindex", "mcp"}
    assert expected <= names


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c))
def test_every_command_has_help_and_is_documented(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*command, "--help"], capsys)
    assert code == 0
    assert "Usage" in out
    assert f"gitquarry {' '.join(command)}" in README, f"README does not document {command}"


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "x", "--bogus"],
        ["history"],
        ["no-such-command"],
        ["history", "x", "--top-n", "abc"],
        ["history", "x", "--top-n", "0"],
        ["history", "x", "--after", "not-a-date"],
        ["history", "x", "--files-glob", "src/[a"],
        ["history", "x", "--mode", "bogus"],
    ],
)
def test_usage_errors_exit_2_without_traceback(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _out, err = run([*argv, "--project", str(tmp_path)] if argv[0] == "history" and
                         len(argv) > 1 else argv, capsys)
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert "Error" in err


def _all_click_commands() -> list[tuple[str, object]]:
    root = get_command(app)
    out: list[tuple[str, object]] = [("gitquarry", root)]
    for name, cmd in root.commands.items():  # type: ignore[attr-defined]
        out.append((name, cmd))
        for child, sub in (getattr(cmd, "commands", None) or {}).items():
            out.append((f"{name} {child}", sub))
    return out


def test_help_text_lines_are_not_the_source_lines() -> None:
    # a docstring's line breaks used to reach the help and the command listings, breaking
    # lines mid-sentence ("kept only in the⏎private 0600 registry")
    for name, cmd in _all_click_commands():
        for paragraph in (getattr(cmd, "help", None) or "").split("\n\n"):
            if paragraph.startswith("\b"):
                continue
            for line in paragraph.split("\n")[1:]:
                assert line.startswith(("- ", "* ")), (name, paragraph)


@pytest.mark.parametrize(("argv", "sentence"), [
    (["web", "--help"], "(a single-use token, valid 10 minutes); the token is never put on a"
                        " command line"),
    (["repo-docs", "--help"], "its path is kept only in the private 0600 registry"),
    (["daemon", "--help"], "the last indexed commit, pending work, the active job"),
    (["--help"], "Index every commit of every repository under PATH (incremental after the"
                 " first run)"),
])
def test_help_wraps_at_the_terminal_width(argv: list[str], sentence: str,
                                          capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert any(sentence in line for line in out.splitlines()), out
