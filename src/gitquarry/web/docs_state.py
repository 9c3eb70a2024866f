"""The Documentation tab's snapshot: seed 002's admin view of one registered authority.

Everything comes from the repository-docs API (``RepoDocsService``: status, policy, plan,
configured namespace), the daemon's job store and coordinator, and the retention constants of
``service.docs_jobs``. What this module adds is the seed's UI state model, computed from
those facts, with the **three lanes kept separate**:

- ``fulltext``: available whenever the registered Git authority resolves (no index, no model);
- ``semantic``: only with a ``ready`` (or ``partial``: its embedded chunks) revision set for
  the HEAD commit and policy in the configured embedding namespace; otherwise hybrid requests
  visibly use the lexical fallback;
- ``attempt``: a building/partial set or a queued/running job, shown as the active attempt,
  next to the most recent failure (``last_failure``), which it never hides; a failed refresh
  never hides an older ready set either (``sets`` keeps them, with their commits).

A stale generation is a rebind requirement (never another repository picked silently); an
invalid policy shows the file, key and pattern. No absolute path: selectors, opaque refs,
repository-relative paths, digests, and CLI handoffs with a placeholder for the path.
"""

from __future__ import annotations

import shlex
import time
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from gitquarry.errors import (
    GitquarryError,
    RepoDocsPolicyInvalidError,
    RepoDocsStaleGenerationError,
)

if TYPE_CHECKING:
    from gitquarry.repo_docs.api import RepoDocsService
    from gitquarry.repo_docs.registry import Binding, Selector


class WebBackend(Protocol):
    """What this module uses of ``web.backend.WebBackend`` (which imports this module)."""

    daemon: Any

    def docs_service(self) -> RepoDocsService: ...

    def jobs(self, *, scope: str | None = None, limit: int = 20) -> list[dict[str, Any]]: ...

PATH_PLACEHOLDER = "/path/to/checkout"
ACTIVE_JOB = ("queued", "running", "interrupted")


def _cmd(*parts: str) -> str:
    return " ".join(shlex.quote(p) if p != PATH_PLACEHOLDER else p for p in parts)


def register_handoff(repo: str = "owner/name") -> str:
    """The CLI command that registers a checkout (the page never picks a path)."""
    return _cmd("gitquarry", "repo-docs", "register", "--repo", repo, "--repository-path",
                PATH_PLACEHOLDER)


def rebind_handoff(repo: str, registration_id: str, generation: int,
                   source_registration_id: str | None = None) -> str:
    """The generation-checked rebind command for the current generation; it names the
    source (``--source-registration-id``) when given, which a registration with more than
    one source needs (the command refuses to guess)."""
    source = ("--source-registration-id", source_registration_id) \
        if source_registration_id else ()
    return _cmd("gitquarry", "repo-docs", "rebind", "--repo", repo, "--registration-id",
                registration_id, *source, "--source-registration-generation", str(generation),
                "--repository-path", PATH_PLACEHOLDER)


def _rebind_for(binding: Binding, generation: int) -> str:
    several = len(binding.registration.sources) > 1
    return rebind_handoff(binding.repo_id, binding.registration.registration_id, generation,
                          binding.source.source_registration_id if several else None)


def policy_fragment(policy: dict[str, Any]) -> str:
    """A commit-ready ``repository_docs`` section reproducing ``policy`` explicitly (for
    ``.gitquarry.yaml``): schema, enabled, preset, include, exclude."""
    section = {"repository_docs": {
        "schema": 1, "enabled": bool(policy.get("enabled", True)),
        "preset": policy.get("preset") or "conventional-docs-v1",
        "include": list(policy.get("include") or []),
        "exclude": list(policy.get("exclude") or []),
    }}
    return str(yaml.safe_dump(section, sort_keys=False, default_flow_style=False,
                              allow_unicode=True))


def _last_gc(backend: WebBackend, jobs: list[dict[str, Any]]) -> dict[str, Any] | None:
    from gitquarry.service.job_store import parse_public_id

    for job in jobs:
        row_id = parse_public_id(job["id"])
        if row_id is None:
            continue
        for event in backend.daemon.state.events(row_id, limit=20):
            if event["kind"] == "gc":
                return {"job": job["id"], "at": event["at"], **event["data"]}
    return None


def retention() -> dict[str, Any]:
    from gitquarry.service import docs_jobs as d

    return {
        "max_sets_per_identity": d.MAX_SETS_PER_IDENTITY, "max_set_age_days":
        d.MAX_SET_AGE_S // 86_400, "overlay_grace_hours": d.OVERLAY_AGE_S // 3600,
        "non_ready_age_days": d.NON_READY_AGE_S // 86_400,
        "checkpoint_age_days": d.CHECKPOINT_AGE_S // 86_400,
        "vector_byte_ceiling": d.vector_byte_ceiling(), "ceiling_env": d.VECTOR_BYTES_ENV,
    }


def snapshot(backend: WebBackend, selector: Selector) -> dict[str, Any]:
    """The tab's data (module docstring). Never raises for the states it shows (stale
    generation, invalid policy, a missing revision, an unavailable provider); raises
    ``RepoDocsRegistrationError`` for a selector that names nothing."""
    service = backend.docs_service()
    daemon = backend.daemon
    binding = None
    stale: RepoDocsStaleGenerationError | None = None
    try:
        binding = service.registry.resolve(selector)
    except RepoDocsStaleGenerationError as exc:
        stale = exc
    if binding is None:
        from gitquarry.repo_docs.registry import Selector as Sel

        assert stale is not None
        current = service.registry.resolve(Sel(selector.repo, selector.registration_id,
                                               selector.source_registration_id,
                                               stale.current))
        return {
            "state": "stale_generation", "selector": current.selector(),
            "given_generation": stale.given, "current_generation": stale.current,
            "message": str(stale),
            "handoffs": {"rebind": _rebind_for(current, stale.current)},
            "retention": retention(), "badges": ["stale_generation"],
        }
    public = binding.public()
    source_id = binding.source.source_registration_id
    jobs = backend.jobs(scope=source_id, limit=15)
    out: dict[str, Any] = {
        "state": "registered",
        "selector": binding.selector(),
        "registration": {**public, "created_at": binding.registration.created_at,
                         "source_created_at": binding.source.created_at,
                         "source_updated_at": binding.source.updated_at,
                         "sources_registered": len(binding.registration.sources)},
        "reconciliation": {
            "next_poll_at": round(daemon.coordinator.next_reconcile_at, 3),
            "poll_s": daemon.config.reconcile_s, "now": round(time.time(), 3),
            "last_job": next((j for j in jobs if j.get("origin") == "reconcile"), None),
        },
        "jobs": jobs,
        "retention": {**retention(), "last_gc": _last_gc(backend, jobs)},
        "handoffs": {
            "rebind": _rebind_for(binding, binding.source.generation),
            "index": _cmd("gitquarry", "repo-docs", "index", "--repo", binding.repo_id,
                          "--registration-id", binding.registration.registration_id,
                          "--source-registration-id", source_id,
                          "--source-registration-generation", str(binding.source.generation)),
        },
        "warnings": [],
    }
    try:
        policy = service.policy(selector)
    except RepoDocsPolicyInvalidError as exc:
        out["state"] = "policy_invalid"
        out["policy_error"] = {"code": exc.code, "file": exc.policy_file, "key": exc.key,
                               "pattern": exc.pattern, "line": exc.line, "detail": exc.detail,
                               "message": daemon.redact(str(exc))}
        out["lanes"] = _lanes(None, None, None, jobs, [], fulltext_why=(
            "the committed policy is invalid: nothing is searched under it until it is "
            "corrected and committed"))
        out["badges"] = ["policy_invalid"]
        return out
    except GitquarryError as exc:
        out["state"] = "unavailable"
        out["error"] = {"code": exc.code, "message": daemon.redact(str(exc))}
        out["lanes"] = _lanes(None, None, None, jobs, [], fulltext_why=daemon.redact(str(exc)))
        out["badges"] = ["unavailable"]
        return out
    out["policy"] = {k: policy[k] for k in (
        "policy_source", "policy_file", "policy_hash", "schema", "enabled", "preset",
        "preset_patterns", "include", "exclude", "effective_include", "matcher")}
    out["policy_fragment"] = policy_fragment(policy)
    out["head"] = {"commit": policy["effective_revision"], "policy_hash": policy["policy_hash"]}
    plan = service.plan(selector, list_files=False)
    out["plan"] = {k: plan.get(k) for k in ("eligible_files", "eligible_bytes",
                                             "not_selected_files", "exclusions_by_reason")}
    status = service.status(selector)
    sets = status["revision_sets"]
    out["sets"] = sets[:12]
    out["sets_total"] = len(sets)
    namespace, ns_warnings = service.configured_namespace()
    out["namespace"] = namespace
    out["warnings"].extend(ns_warnings)
    head_sets = [s for s in sets if s["commit_oid"] == status["head_revision"]
                 and s["policy_hash"] == status["policy_hash"] and not s["overlay_digest"]]
    head_set = next((s for s in head_sets if s["namespace_id"] == namespace), None)
    out["head_set"] = head_set
    out["overlay"] = _overlay(service, selector, sets, status["head_revision"])
    out["lanes"] = _lanes(head_set, namespace, ns_warnings, jobs, sets)
    out["badges"] = badges(out)
    return out


def badges(snap: dict[str, Any]) -> list[str]:
    """The state codes that apply (the page shows them; tests assert them): ``ready``,
    ``partial``, ``building``, ``registered_no_set``, ``no_head_set``, ``failed``,
    ``failed_after_ready``, ``overlay_stale``, ``provider_unavailable`` (plus
    ``stale_generation``/``policy_invalid``/``unavailable`` from ``state``)."""
    if snap["state"] != "registered":
        return [snap["state"]]
    lanes = snap["lanes"]
    out: list[str] = []
    semantic = lanes["semantic"]["state"]
    if semantic in ("ready", "partial", "provider_unavailable"):
        out.append(semantic)
    elif not snap.get("sets"):
        out.append("registered_no_set")
    else:
        out.append("no_head_set")
    attempt = lanes["attempt"]
    if attempt and ((attempt["job"] and attempt["job"]["status"] in ("queued", "running"))
                    or (attempt["set"] and attempt["set"]["coverage"]["state"] == "building")):
        out.append("building")
    if lanes["last_failure"]:
        out.append("failed_after_ready" if lanes["newest_ready"] else "failed")
    if snap.get("overlay", {}).get("stale"):
        out.append("overlay_stale")
    return out


def _overlay(service: Any, selector: Selector, sets: list[dict[str, Any]],
             head: str) -> dict[str, Any]:
    """The working-tree overlay now versus the newest overlay set of HEAD."""
    current = None
    error = None
    try:
        current = service.policy(selector, include_worktree=True).get("overlay_digest")
    except GitquarryError as exc:
        error = exc.code
    indexed = next((s for s in sets if s["overlay_digest"] and s["commit_oid"] == head), None)
    stale = indexed is not None and (indexed["overlay_digest"] != current
                                     or indexed["coverage"]["state"] == "superseded")
    return {"current_digest": current, "indexed": indexed, "stale": stale, "error": error}


def _lanes(head_set: dict[str, Any] | None, namespace: str | None,
           ns_warnings: list[dict[str, str]] | None, jobs: list[dict[str, Any]],
           sets: list[dict[str, Any]], *, fulltext_why: str | None = None) -> dict[str, Any]:
    fulltext = {"available": fulltext_why is None,
                "why": fulltext_why or "the registered Git authority serves full-text search "
                "over the exact blobs (no index or model needed)"}
    state = head_set["coverage"]["state"] if head_set else None
    if fulltext_why is not None:
        semantic = {"state": "unavailable", "why": "no search under an invalid policy"}
    elif namespace is None:
        why = (ns_warnings or [{"message": "no embedding provider"}])[0]["message"]
        semantic = {"state": "provider_unavailable",
                    "why": f"{why}; hybrid requests use the full-text fallback"}
    elif state == "ready":
        semantic = {"state": "ready", "why": "the HEAD revision set is ready: hybrid search "
                    "fuses full-text and semantic ranking"}
    elif state == "partial":
        cov = head_set["coverage"] if head_set else {}
        semantic = {"state": "partial", "why": f"{cov.get('embedded_chunks')} of "
                    f"{cov.get('eligible_chunks')} chunks embedded take part in semantic "
                    "ranking (partial set)"}
    else:
        semantic = {"state": "none", "why": "no ready revision set for HEAD in the configured "
                    "namespace: hybrid requests use the full-text fallback"}
    active = next((j for j in jobs if j["status"] in ACTIVE_JOB), None)
    attempt_set = next((s for s in sets if s["coverage"]["state"] in ("building", "partial")),
                       None)
    failed_job = next((j for j in jobs if j["status"] == "failed"), None)
    failed_set = next((s for s in sets if s["coverage"]["state"] == "failed"
                       or (s["coverage"]["state"] == "partial" and s.get("error_code"))), None)
    older_ready = next((s for s in sets if s["coverage"]["state"] == "ready"), None)
    return {
        "fulltext": fulltext, "semantic": semantic,
        "attempt": {"job": active, "set": attempt_set} if (active or attempt_set) else None,
        "last_failure": ({"job": failed_job, "set": failed_set}
                         if (failed_job or failed_set) else None),
        "newest_ready": older_ready,
    }
