"""``gitquarry repo-docs``: register, rebind, sources, policy, plan, index, status, search.

Each command parses its options, makes one ``RepoDocsService`` call and formats the result.
``--json`` prints the library's dict; the text output escapes control characters
(``cli.common.printable``). No command reads a repository from the working directory: a
repository is named by ``--repo`` (optional when exactly one is registered) and, when several
authorities are registered, the full opaque selector.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from gitquarry.cli.common import (
    Command,
    Group,
    JsonOption,
    hint,
    print_json,
    printable,
    stderr,
    stdout,
    warn,
)
from gitquarry.cli.pipeline_explain import pipeline_lines, summary_lines
from gitquarry.config import load_config
from gitquarry.repo_docs.registry import Selector
from gitquarry.token_budget import check_max_tokens

if TYPE_CHECKING:
    from gitquarry.query.docs import DocsRequest
    from gitquarry.repo_docs.api import RepoDocsService

app = typer.Typer(
    name="repo-docs",
    help="Search a repository's documentation as versioned in Git (tracked policy, "
    "revision sets, cited answers).",
    no_args_is_help=True,
    cls=Group,
)

RepoOption = Annotated[
    str | None,
    typer.Option("--repo", help="Repository name (owner/name); optional when only one "
                 "repository is registered.", show_default=False),
]
RegistrationOption = Annotated[
    str | None, typer.Option("--registration-id", help="Opaque registration id (from "
                             "`register` or `sources`).", show_default=False)]
SourceOption = Annotated[
    str | None, typer.Option("--source-registration-id", help="Opaque source id.",
                             show_default=False)]
GenerationOption = Annotated[
    int | None, typer.Option("--source-registration-generation", help="Source generation.",
                             show_default=False)]
RevisionOption = Annotated[
    str | None, typer.Option("--revision", help="Any Git revision: branch, tag, hash, HEAD~3 "
                             "(default: HEAD).", show_default=False)]
PlanMaxTokens = Annotated[
    int | None, typer.Option(
        "--max-tokens", metavar="N", show_default=False,
        help="With --json: fit the whole response in N tokens (500-1000000): the file and "
        "exclusion lists are cut (truncated says how many; the counts stay whole).")]
SearchMaxTokens = Annotated[
    int | None, typer.Option(
        "--max-tokens", metavar="N", show_default=False,
        help="With --json: fit the whole response in N tokens (500-1000000): the "
        "lowest-ranked hits are left out (truncated says how many).")]
WorktreeOption = Annotated[
    bool, typer.Option("--include-worktree", help="Overlay tracked working-tree changes "
                       "(modified, deleted, renamed; never untracked files).")]


def _service() -> RepoDocsService:
    from gitquarry.repo_docs.api import RepoDocsService  # numpy & co. only when needed

    return RepoDocsService(load_config(None))


def _selector(repo: str | None, registration_id: str | None, source_id: str | None,
              generation: int | None) -> Selector:
    return Selector(repo, registration_id, source_id, generation)


def _print_selector(data: dict[str, Any]) -> None:
    stdout.print(Text(f"repo_id: {data['repo_id']}"))
    for key in ("registration_id", "source_registration_id", "source_registration_generation",
                "git_store_ref", "worktree_ref"):
        stdout.print(Text(f"  {key}: {data.get(key)}"))


@app.command("register", cls=Command)
def register_cmd(
    repo: Annotated[str | None, typer.Option(
        "--repo", help="Repository name (owner/name). Default: owner/name from the origin "
        "remote's URL when it is a GitHub-style URL, else the directory's name.",
        show_default=False)] = None,
    repository_path: Annotated[Path, typer.Option(
        "--repository-path", help="The local working tree or bare repository (default: the "
        "current directory).", file_okay=False, show_default=False)] = Path("."),
    json_output: JsonOption = False,
) -> None:
    """Register a local Git authority for a repository (its path is kept only in the
    private 0600 registry)."""
    derived_from = None
    if repo is None:
        from gitquarry.repo_docs.registry import derive_repo_name

        repo, derived_from = derive_repo_name(repository_path)
    with _service() as service:
        data = service.register(repo, repository_path)
    if derived_from is not None:
        where = {"origin": "the origin remote", "directory": "the directory name",
                 "registered": "its registration"}[derived_from]
        hint(f"repository name {printable(data['repo_id'])} (from {where}; pass --repo "
             "owner/name to choose another)")
    if json_output:
        print_json(data)
        return
    stdout.print("Registered.", highlight=False)
    _print_selector(data)
    hint(f"next: `gitquarry repo-docs index --repo {printable(data['repo_id'])}` builds its "
         f"search index; `gitquarry repo-docs search QUERY --repo "
         f"{printable(data['repo_id'])}` works now (full text)")


@app.command("rebind", cls=Command)
def rebind_cmd(
    repo: Annotated[str, typer.Option("--repo", help="Repository name.")],
    registration_id: Annotated[str, typer.Option(
        "--registration-id", help="The registration to move (`repo-docs sources` lists "
        "them).")],
    generation: Annotated[int, typer.Option("--source-registration-generation",
                                            help="The current generation (compare-and-swap).")],
    repository_path: Annotated[Path, typer.Option(
        "--repository-path", file_okay=False,
        help="The repository's new local directory.")],
    source_id: SourceOption = None,
    json_output: JsonOption = False,
) -> None:
    """Point a registration at another local path, only if its generation is still current."""
    with _service() as service:
        data = service.rebind(repo, registration_id, generation, repository_path, source_id)
    if json_output:
        print_json(data)
        return
    stdout.print("Rebound.", highlight=False)
    _print_selector(data)


@app.command("sources", cls=Command)
def sources_cmd(repo: RepoOption = None, json_output: JsonOption = False) -> None:
    """List registered authorities and their opaque selectors."""
    with _service() as service:
        data = service.sources(repo)
    if json_output:
        print_json(data)
        return
    if not data["sources"]:
        stdout.print("No repositories registered.", highlight=False)
    for source in data["sources"]:
        _print_selector(source)


@app.command("policy", cls=Command)
def policy_cmd(repo: RepoOption = None, registration_id: RegistrationOption = None,
               source_id: SourceOption = None, generation: GenerationOption = None,
               revision: RevisionOption = None, include_worktree: WorktreeOption = False,
               json_output: JsonOption = False) -> None:
    """Show the effective docs policy at a revision and where it came from."""
    with _service() as service:
        data = service.policy(_selector(repo, registration_id, source_id, generation),
                              revision=revision, include_worktree=include_worktree)
    if json_output:
        print_json(data)
        return
    source = data["policy_source"] + (f" ({data['policy_file']})" if data["policy_file"] else "")
    lines = [
        f"Policy at {data['effective_revision'][:12]}: {source}",
        f"  enabled: {str(data['enabled']).lower()}; preset: {data['preset']}",
        f"  include: {', '.join(data['effective_include']) or '(none)'}",
        f"  exclude: {', '.join(data['exclude']) or '(none)'}",
        f"  policy_hash: {data['policy_hash']}",
    ]
    for line in lines:
        stdout.print(Text(printable(line)))


@app.command("plan", cls=Command)
def plan_cmd(repo: RepoOption = None, registration_id: RegistrationOption = None,
             source_id: SourceOption = None, generation: GenerationOption = None,
             revision: RevisionOption = None, include_worktree: WorktreeOption = False,
             files: Annotated[bool, typer.Option("--files", help="List every eligible file "
                                                 "and exclusion.")] = False,
             max_tokens: PlanMaxTokens = None,
             json_output: JsonOption = False) -> None:
    """Show which files an index of the revision would hold, and why others are excluded."""
    check_max_tokens(max_tokens)
    with _service() as service:
        data = service.plan(_selector(repo, registration_id, source_id, generation),
                            revision=revision, include_worktree=include_worktree)
    if json_output:
        if max_tokens is not None:
            from gitquarry.repo_docs.answers import fit_plan

            data = fit_plan(data, max_tokens)
        print_json(data)
        return
    out = [
        f"Plan for {data['effective_revision'][:12]} ({data['authority']}), policy "
        f"{data['policy_source']}:",
        f"  matchers: include {', '.join(data['effective_include']) or '(none)'}; "
        f"exclude {', '.join(data['exclude']) or '(none)'}",
        f"  eligible: {data['eligible_files']:,} files, {data['eligible_bytes']:,} bytes",
        f"  not selected: {data['not_selected_files']:,} files",
    ]
    for reason, count in data["exclusions_by_reason"].items():
        out.append(f"  excluded ({reason}): {count:,}")
    if files:
        out += [f"  + {f['path']} ({f['content_class']}, {f['size']:,} B)"
                for f in data["files"]]
        out += [f"  - {e['path']} ({e['reason']})" for e in data["exclusions"]]
    for line in out:
        stdout.print(Text(printable(line)))


@app.command("index", cls=Command)
def index_cmd(repo: RepoOption = None, registration_id: RegistrationOption = None,
              source_id: SourceOption = None, generation: GenerationOption = None,
              revision: RevisionOption = None, include_worktree: WorktreeOption = False,
              quiet: Annotated[bool, typer.Option("--quiet", "-q",
                                                  help="No progress output.")] = False,
              detach: Annotated[bool, typer.Option(
                  "--detach", help="Submit the daemon job and print its id; do not wait.")]
              = False,
              foreground: Annotated[bool, typer.Option(
                  "--foreground", help="Index in this process instead of the daemon.")]
              = False,
              json_output: JsonOption = False) -> None:
    """Build the revision set for a revision (chunk locators and vectors, no document text)
    as a daemon job (started if none runs) and follow it; Ctrl-C detaches. Resumable: an
    interrupted run continues where it stopped."""
    from gitquarry.cli.progress import RichProgress
    from gitquarry.repo_docs.indexer import IndexProgress

    if not foreground:
        from gitquarry.cli.jobs import submit_docs_index

        raise typer.Exit(submit_docs_index(
            {"repo": repo, "registration_id": registration_id,
             "source_registration_id": source_id, "source_registration_generation": generation},
            revision=revision, include_worktree=include_worktree, detach=detach,
            quiet=quiet, as_json=json_output))

    with _service() as service, RichProgress(quiet=quiet or json_output) as bar:
        state: dict[str, Any] = {"phase": "", "done": 0}
        names = {"plan": "Reading docs", "embed": "Embedding chunks"}

        def progress(event: IndexProgress) -> None:
            if event.phase not in names:
                return
            if event.phase != state["phase"]:
                state["phase"], state["done"] = event.phase, 0
                bar.phase(names[event.phase], event.total or None)
            bar.advance(max(0, event.done - state["done"]))
            state["done"] = max(state["done"], event.done)

        try:
            result = service.index(_selector(repo, registration_id, source_id, generation),
                                   revision=revision, include_worktree=include_worktree,
                                   progress=progress)
        except KeyboardInterrupt:
            stderr.print("Interrupted: finished batches are kept; run the same command again "
                          "to resume.", highlight=False)
            raise typer.Exit(130) from None
    data = result.to_dict()
    if json_output:
        print_json(data)
        return
    for warning in result.warnings:
        warn(warning["message"])
    if result.up_to_date:
        head = (f"Revision set for {result.effective_revision[:12]} is up to date "
                f"({result.eligible_files:,} files, {result.eligible_chunks:,} chunks).")
    else:
        head = (f"Indexed {result.eligible_files:,} files ({result.eligible_bytes:,} bytes) at "
                f"{result.effective_revision[:12]}: {result.eligible_chunks:,} chunks, "
                f"{result.embedded:,} embedded, {result.reused:,} reused; state {result.state} "
                f"({result.seconds:.1f} s).")
    stdout.print(head, highlight=False)
    if result.exclusions_by_reason:
        parts = ", ".join(f"{k} {v}" for k, v in result.exclusions_by_reason.items())
        stdout.print(f"Excluded: {parts}.", highlight=False)
    if result.state not in ("ready",):
        raise typer.Exit(1)


@app.command("status", cls=Command)
def status_cmd(repo: RepoOption = None, registration_id: RegistrationOption = None,
               source_id: SourceOption = None, generation: GenerationOption = None,
               json_output: JsonOption = False) -> None:
    """Show the registration, HEAD and the revision sets in the cache."""
    with _service() as service:
        data = service.status(_selector(repo, registration_id, source_id, generation))
    if json_output:
        print_json(data)
        return
    _print_selector(data)
    stdout.print(f"HEAD: {data['head_revision']} (policy {data['policy_source']})",
                 highlight=False)
    head = data["head_set"]
    if head is None:
        stdout.print("HEAD revision set: none (full-text search works; run `gitquarry "
                     "repo-docs index` for hybrid)", highlight=False)
    for row in data["revision_sets"]:
        cov = row["coverage"]
        stdout.print(
            f"  {row['revision_set_id'][:12]} {row['commit_oid'][:12]} {cov['state']:<10} "
            f"{cov['eligible_files']:,} files, {cov['embedded_chunks']:,}/"
            f"{cov['eligible_chunks']:,} chunks embedded"
            + (f" [{row['authority']}]" if row["authority"] != "git" else ""),
            highlight=False,
        )


_MARK = re.compile(r"<b>(.*?)</b>")


def _styled(snippet: str) -> Text:
    text = Text()
    pos = 0
    for match in _MARK.finditer(snippet):
        text.append(printable(snippet[pos : match.start()]))
        text.append(printable(match.group(1)), style="bold")
        pos = match.end()
    text.append(printable(snippet[pos:]))
    return text


def cli_docs_request(query: str, *, selector: Selector, revision: str | None = None,
                     mode: str | None = None, limit: int | None = None,
                     include_worktree: bool = False, diverse: bool = False,
                     min_score: float | None = None, explain: bool = False,
                     max_tokens: int | None = None) -> DocsRequest:
    """The ``DocsRequest`` of ``repo-docs search``'s options (``--diverse`` a switch).

    :raises InvalidArgumentError: see ``gitquarry.query.docs.docs_request``."""
    from gitquarry.query.docs import docs_request

    return docs_request(selector, query, revision=revision, mode=mode, limit=limit,
                        include_worktree=include_worktree, diverse=True if diverse else None,
                        min_score=min_score, explain=explain, max_tokens=max_tokens)


@app.command("search", cls=Command)
def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for.", metavar="QUERY")],
    repo: RepoOption = None, registration_id: RegistrationOption = None,
    source_id: SourceOption = None, generation: GenerationOption = None,
    revision: RevisionOption = None,
    mode: Annotated[str | None, typer.Option("--mode", metavar="MODE",
                                             help="hybrid (default) or fulltext.",
                                             show_default=False)] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Results, 1-50 (default 10).",
                                              show_default=False)] = None,
    include_worktree: WorktreeOption = False,
    diverse: Annotated[bool, typer.Option("--diverse", help="Diversify the results (MMR).")
                       ] = False,
    min_score: Annotated[float | None, typer.Option(
        "--min-score", metavar="SCORE", show_default=False,
        help="Leave out results scoring below SCORE (0-1).")] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show what the result pipeline moved or removed.")] = False,
    max_tokens: SearchMaxTokens = None,
    json_output: JsonOption = False,
) -> None:
    """Search the docs at a revision; every hit is cited as path:lines of an exact blob."""
    from gitquarry.query.docs import search_docs

    request = cli_docs_request(
        query, selector=_selector(repo, registration_id, source_id, generation),
        revision=revision, mode=mode, limit=limit, include_worktree=include_worktree,
        diverse=diverse, min_score=min_score, explain=explain, max_tokens=max_tokens)
    with _service() as service:
        data = search_docs(service, request)
    if json_output:
        if max_tokens is not None:
            from gitquarry.repo_docs.answers import fit_hits

            data = fit_hits(data, max_tokens)
        print_json(data)
        return
    for message in data["warnings"]:
        warn(message)
    if explain:
        for line in summary_lines(data.get("pipeline")):
            stderr.print(Text(line), highlight=False)
    if not data["hits"]:
        stdout.print("No results found.", highlight=False)
        return
    for hit in data["hits"]:
        cite = hit["citation"]
        head = f"{hit['rank']:>2}. {cite['path']}:{cite['line_start']}-{cite['line_end']}"
        if hit["heading_path"]:
            head += f"  {hit['heading_path']}"
        stdout.print(Text(printable(head), style="bold"))
        stdout.print(Text("    ").append(_styled(hit["snippet"])))
        if explain:
            for line in pipeline_lines(hit.get("pipeline")):
                stdout.print(Text(f"    {line}"), highlight=False)
    stderr.print(
        f"{data['effective_mode']} at {data['effective_revision'][:12]} "
        f"({data['authority']})", highlight=False)


def register(root: typer.Typer) -> None:
    """Add the ``repo-docs`` command group to ``root``."""
    root.add_typer(app, name="repo-docs")
