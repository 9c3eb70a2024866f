"""The job types the daemon runs: the built-in ones (``service.job_types``,
``service.docs_jobs``) registered on first look-up, through the same ``register_job_type``
hook as any other. ``service.jobs`` (the types' contract) imports none of them, so a job
type module depends on the contract and the catalog on both, with no ring."""

from __future__ import annotations

from gitquarry.service.jobs import JobType, registered_job_type, registered_job_type_names


def _load_builtin() -> None:
    from gitquarry.service import docs_jobs, job_types  # noqa: F401 - registers them


def job_type(name: str) -> JobType:
    """The registered type ``name``. :raises KeyError: unknown type."""
    _load_builtin()
    return registered_job_type(name)


def job_type_names() -> list[str]:
    """Every registered type's name, sorted."""
    _load_builtin()
    return registered_job_type_names()
