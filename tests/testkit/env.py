"""The isolated user every test runs as: a private HOME, git config and gitquarry config."""

from __future__ import annotations

from pathlib import Path

import pytest

GITCONFIG = (
    "[init]\n\tdefaultBranch = main\n"
    "[user]\n\tname = {name}\n\temail = ada@example.com\n"
    "[commit]\n\tgpgsign = false\n"
    "[core]\n\tautocrlf = false\n"
)

#: variables of the developer's own shell that would leak into a test's git or gitquarry
LEAKY = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
    "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "GITQUARRY_DEBUG", "GITQUARRY_LOG",
)


def isolate_user(home: Path, mp: pytest.MonkeyPatch, *, name: str = "Ada Author",
                 user_config: str | None = "gitquarry.toml", state: bool = False) -> Path:
    """Make ``home`` the user's home for the rest of the test (through ``mp``).

    Sets HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL (a config with ``init.defaultBranch=main``
    and ``user.name=name``), GIT_CONFIG_NOSYSTEM, COLUMNS=200 and GITQUARRY_CONFIG: an empty
    file ``home/user_config`` (``None``: ``/dev/null``); ``state`` also points XDG_STATE_HOME
    under ``home``. Removes :data:`LEAKY`. Returns ``home``.
    """
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(GITCONFIG.format(name=name), encoding="utf-8")
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    if state:
        mp.setenv("XDG_STATE_HOME", str(home / ".state"))
    mp.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    if user_config is None:
        mp.setenv("GITQUARRY_CONFIG", "/dev/null")
    else:
        (home / user_config).write_text("", encoding="utf-8")
        mp.setenv("GITQUARRY_CONFIG", str(home / user_config))
    mp.setenv("COLUMNS", "200")
    for key in LEAKY:
        mp.delenv(key, raising=False)
    return home
