"""``gitquarry web``: open the local web page the daemon serves (127.0.0.1 only)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gitquarry.cli.common import Command, JsonOption, note, out, print_json, printable


def web_cmd(
    path: Annotated[Path | None, typer.Argument(
        help="Also watch (and index) the workspace at PATH, as `gitquarry daemon watch`.",
        file_okay=False, show_default=False, metavar="PATH")] = None,
    port: Annotated[int, typer.Option(
        "--port", min=0, max=65535, metavar="N",
        help="Port on 127.0.0.1 (default: any free port; the page never listens elsewhere).",
    )] = 0,
    no_open: Annotated[bool, typer.Option(
        "--no-open", help="Print the sign-in link (it carries the token) instead of opening "
        "a browser.")] = False,
    stop: Annotated[bool, typer.Option(
        "--stop", help="Stop serving the page (the daemon keeps running).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Serve the web page from the daemon (starting it if needed) and open it.

    The browser is opened on a private sign-in page (a file only you can read) that signs one
    browser in once (a single-use token, valid 10 minutes); the token is never put on a
    command line. With --no-open the sign-in link is printed instead. Run the command again
    for a new one.
    """
    from gitquarry.service.client import start_daemon

    if stop:
        from gitquarry.errors import DaemonNotRunningError
        from gitquarry.service.client import connect

        try:
            stopped = bool(connect().call("web.stop").get("stopped"))
        except DaemonNotRunningError:
            stopped = False
        if as_json:
            print_json({"stopped": stopped})
        else:
            out("Stopped serving the web page." if stopped else "The web page was not served.")
        return
    opens_on: str | None = None
    if path is not None:
        from gitquarry.cli.daemon import watch_workspace

        watched = watch_workspace(path)
        opens_on = str(watched["workspace_ref"])  # the page opens on PATH's workspace
        note(f"Watching {printable(watched['name'])} ({watched['workspace_ref']}).")
    client, started = start_daemon()
    if started:
        note("Started the gitquarry daemon.")
    result = client.call("web.start", port=port, workspace=opens_on)
    if no_open:
        _print_link(result, started, as_json)
        return
    from urllib.parse import parse_qs, urlparse

    from gitquarry.web.login_page import write_login_page

    base = str(result["url"])
    token = parse_qs(urlparse(str(result["login_url"])).query)["token"][0]
    page = write_login_page(base, token)
    public = {k: v for k, v in result.items() if k != "login_url"}
    if as_json:
        print_json({**public, "login_page": str(page), "daemon_started": started})
    else:
        out(f"gitquarry web page: {base}")
        note(f"Signing in through a private page only you can read: {printable(str(page))} "
             "(single use, 10 minutes; `gitquarry web` writes a new one).")
    opened = _open_browser(page.as_uri())
    if not opened:
        note("No browser could be opened here; open the sign-in page above yourself, or run "
             "`gitquarry web --no-open` for a link to paste.")


def _print_link(result: dict[str, object], started: bool, as_json: bool) -> None:
    url = str(result["login_url"])
    if as_json:
        print_json({**result, "daemon_started": started})
    else:
        out(f"gitquarry web page: {url}")
        note("The link signs one browser in (single use, 10 minutes); "
             "`gitquarry web` prints a new one.")


def _open_browser(target: str) -> bool:
    """Open ``target`` (a ``file://`` URL holding no secret) in the user's browser."""
    import webbrowser

    try:
        return bool(webbrowser.open(target, new=2))
    except Exception:  # no browser to run: the printed page path still works
        return False


def register(app: typer.Typer) -> None:
    app.command(cls=Command, name="web")(web_cmd)
