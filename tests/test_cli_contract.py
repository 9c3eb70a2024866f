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
