"""A worker process carries the name of the window job that started it (issue 36: the memory bench names
every child by its job, e.g. ``trace-why:index+checkpoints``)."""
from __future__ import annotations

from app.store.childproc import JOB_ENV, child_env


class _Job:
    name = "trace-why"
    cancelled = False


def test_child_env_names_the_job():
    assert child_env(_Job())[JOB_ENV] == "trace-why"


def test_child_env_without_a_job_has_no_name(monkeypatch):
    monkeypatch.delenv(JOB_ENV, raising=False)
    assert JOB_ENV not in child_env(None)
    assert JOB_ENV not in child_env(lambda: False)
