"""Builds that run until stopped, and the TeX processes working on them, for tests of stopping work."""

import os
from pathlib import Path

from processing.models import JobState, ProcessingJob
from tests.factories import ProjectFactory
from tests.waiting import wait_until
from workspace import services as workspace_services

ENDLESS_LOOP = (Path(__file__).resolve().parents[2] / "corpora" / "tex" / "endless-loop.tex").read_bytes()


def processes_working_under(root: Path) -> list[int]:
    """Live processes whose working directory is inside ``root``: a job's TeX runs in its own work directory."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd") if entry.isdigit() else ""
        except OSError:
            continue  # gone meanwhile, or a zombie, which has no working directory left
        if cwd.startswith(f"{root}/"):
            found.append(int(entry))
    return found


def looping_build(owner, author, work: Path, key: str) -> str:
    """Submit a build of the endless loop and return its job id once TeX is running it."""
    project = ProjectFactory(owner=owner, starter=True)
    workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=ENDLESS_LOOP)
    status, job, _ = author.json("POST", f"/v1/projects/{project.pk}/builds", {}, headers={"Idempotency-Key": key})
    assert status == 202, job
    wait_until(lambda: ProcessingJob.objects.get(pk=job["id"]).state == JobState.RUNNING, what="the claim")
    wait_until(lambda: processes_working_under(work), what="TeX to run the build")
    return job["id"]
