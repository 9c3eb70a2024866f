"""``gitquarry completion bash|zsh|fish``: the shell completion script (typer's, from click's
completion protocol), to source from a shell's start-up file."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from gitquarry.cli.common import Command

#: the shells a script can be printed for
SHELLS = ("bash", "zsh", "fish")

#: the environment variable the script sets when it asks the command for completions
COMPLETE_VAR = "_GITQUARRY_COMPLETE"


def completion_script(shell: str, root: Any) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`) of the command tree
    ``root`` (the running app's root click command: this module never imports the app).

    :raises typer.BadParameter: another shell."""
    from typer._click.shell_completion import get_completion_class
    from typer._completion_classes import completion_init

    completion_init()
    cls = get_completion_class(shell) if shell in SHELLS else None
    if cls is None:
        raise typer.BadParameter(f"{shell!r}: one of {', '.join(SHELLS)}", param_hint="SHELL")
    return cls(root, {}, "gitquarry", COMPLETE_VAR).source()


def register(app: typer.Typer) -> None:
    """Add ``completion`` to ``app``."""

    @app.command("completion", cls=Command)
    def completion_cmd(
        ctx: typer.Context,
        shell: Annotated[str, typer.Argument(help="bash, zsh or fish.", metavar="SHELL")],
    ) -> None:
        """Print the shell completion script: add `eval "$(gitquarry completion bash)"` to
        ~/.bashrc (zsh: ~/.zshrc; fish: `gitquarry completion fish | source` in
        ~/.config/fish/config.fish)."""
        root = ctx.find_root().command
        sys.stdout.write(completion_script(shell, root).rstrip("\n") + "\n")
