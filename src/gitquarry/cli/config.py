"""``gitquarry config path|show|check``: which files configure a workspace, every effective
value with where it came from, and whether the files are valid.

Everything goes through the loader (``gitquarry.config.load_config``) and its trust rules;
this module only reads the same files again to say which of them set each key."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer

from gitquarry.cli.common import (
    Group,
    JsonOption,
    ProjectOption,
    out,
    print_json,
    styled,
    warn,
)

#: where a value came from, as ``config show`` says it
DEFAULT = "default"
USER_FILE = "user file"
WORKSPACE_ACCEPTED = "workspace file (accepted)"
WORKSPACE_TRUSTED = "workspace file (trusted workspace)"
#: the sections in the order ``config show`` prints them (the keys: ``config.SETTINGS``)
_SHOW_ORDER = ("indexing", "git_indexing", "embedding", "search", "graph", "docs", "daemon",
               "trust")


def _paths(project: Path | None) -> tuple[Path, Path | None, Path]:
    """(workspace root, the user's file or None for /dev/null, the workspace file)."""
    from gitquarry.config import WORKSPACE_CONFIG_NAME, user_config_path
    from gitquarry.workspace import resolve_workspace

    root = resolve_workspace(project, for_search=True).root
    return root, user_config_path(), root / WORKSPACE_CONFIG_NAME


def _file_items(path: Path | None) -> dict[tuple[str, str], Any]:
    """``{(section, key): value}`` a file sets (checked against the schema by the loader's
    own reader); empty when the file does not exist."""
    from gitquarry.config import _checked_items, _read_toml

    if path is None or not (path.exists() or path.is_symlink()):
        return {}
    return {(s, k): v for s, k, v in _checked_items(_read_toml(path), path)}


def provenance(project: Path | None) -> dict[str, Any]:
    """The effective configuration of the workspace at ``project`` with each value's origin.

    Returns ``{"workspace", "user_file", "user_file_exists", "workspace_file",
    "workspace_file_exists", "values": [{"section", "key", "value", "source"}],
    "refused": [{"code", "file", "keys", "message"}]}``; ``source`` is one of ``default``,
    ``user file``, ``workspace file (accepted)``, ``workspace file (trusted workspace)``.

    :raises ConfigError: a file is invalid (the loader's error, unchanged).
    """
    from gitquarry.config import SETTINGS, load_config

    root, user_path, ws_path = _paths(project)
    config = load_config(root)  # the loader decides; the rest only explains its answer
    user = _file_items(user_path)
    workspace = _file_items(ws_path) if ws_path in config.sources else {}
    refused = {(w.path, key) for w in config.warnings for key in w.keys}
    trusted = any(
        dataclasses.asdict(w).get("code") == "config_key_refused" for w in config.warnings
    ) is False and bool(workspace) and _trusted(config, root)
    values = []
    for section in _SHOW_ORDER:
        current = dataclasses.asdict(getattr(config, section))
        for declared in (s for s in SETTINGS if s.section == section):
            key, value, name = declared.key, current[declared.key], declared.name
            if (section, key) in workspace and (ws_path, name) not in refused:
                source = WORKSPACE_TRUSTED if trusted else WORKSPACE_ACCEPTED
            elif (section, key) in user:
                source = USER_FILE
            else:
                source = DEFAULT
            values.append({"section": section, "key": key, "value": value, "source": source})
    return {
        "workspace": str(root),
        "user_file": str(user_path) if user_path is not None else None,
        "user_file_exists": user_path is not None and user_path in config.sources,
        "workspace_file": str(ws_path),
        "workspace_file_exists": ws_path in config.sources,
        "values": values,
        "refused": [{"code": w.code, "file": str(w.path), "keys": list(w.keys),
                     "message": w.message} for w in config.warnings],
    }


def _trusted(config: Any, root: Path) -> bool:
    from gitquarry.config import _trusted_workspace

    return _trusted_workspace(config, root)


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return '""'
    return json.dumps(value, ensure_ascii=False)


def register(app: typer.Typer) -> None:
    """Add the ``config`` group to ``app``."""
    config_app = typer.Typer(
        cls=Group, no_args_is_help=True,
        help="Where the configuration is read from, every value with its source, and a "
        "validity check (the same loader and trust rules as every command). Every key, its "
        "range and who may set it: docs/configuration.md.")
    app.add_typer(config_app, name="config")

    @config_app.command("path")
    def path_cmd(as_json: JsonOption = False, project: ProjectOption = None) -> None:
        """Print the user's configuration file and the workspace's .gitquarry.toml (and
        whether each exists)."""
        root, user_path, ws_path = _paths(project)
        data = {
            "user_file": str(user_path) if user_path is not None else None,
            "user_file_exists": bool(user_path and user_path.exists()),
            "workspace": str(root),
            "workspace_file": str(ws_path),
            "workspace_file_exists": ws_path.exists(),
        }
        if as_json:
            print_json(data)
            return
        if user_path is None:
            out("user file:      none (GITQUARRY_CONFIG=/dev/null)")
        else:
            out(f"user file:      {user_path}"
                + ("" if data["user_file_exists"] else "  (does not exist: defaults)"))
        out(f"workspace file: {ws_path}"
            + ("" if data["workspace_file_exists"] else "  (does not exist)"))

    @config_app.command("show")
    def show_cmd(
        as_json: JsonOption = False,
        project: ProjectOption = None,
        changed: Annotated[bool, typer.Option(
            "--changed", help="Only the values a file sets (not the defaults).")] = False,
    ) -> None:
        """Print every effective setting as TOML, each with where it came from: default,
        user file, or the workspace's .gitquarry.toml (accepted, or refused with the
        reason)."""
        data = provenance(project)
        if as_json:
            print_json(data)
            return
        section = None
        for item in data["values"]:
            if changed and item["source"] == DEFAULT:
                continue
            if item["section"] != section:
                if section is not None:
                    out("")
                section = item["section"]
                out(styled((f"[{section}]", "bold")))
            out(styled(f"{item['key']} = {_toml_value(item['value'])}",
                       (f"  # {item['source']}", "dim")))
        for refused in data["refused"]:
            warn(f"refused: {refused['message']}")

    @config_app.command("check")
    def check_cmd(as_json: JsonOption = False, project: ProjectOption = None) -> None:
        """Check the configuration files (exit 0 when valid; 2 with the loader's error when
        not). Refused workspace settings are listed as warnings."""
        data = provenance(project)  # raises ConfigError (exit 2) on an invalid file
        files = [f for f, exists in ((data["user_file"], data["user_file_exists"]),
                                     (data["workspace_file"], data["workspace_file_exists"]))
                 if exists]
        if as_json:
            print_json({"valid": True, "files": files, "refused": data["refused"]})
            return
        for refused in data["refused"]:
            warn(refused["message"])
        out(f"configuration valid ({', '.join(files) if files else 'defaults only'})"
            + (f"; {len(data['refused'])} refused setting(s)" if data["refused"] else ""))
