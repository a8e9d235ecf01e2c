"""Fair slots against running work, with a real server and a real LaTeX agent of two slots.

One author's two endless builds took both slots while nobody else waited. Another author's build is queued;
the maintenance loop's pass asks the newer endless build to give its slot back: the agent stops its TeX, the
job is queued again without using an attempt, the other author's build runs and succeeds while the older
endless build keeps running, and the yielded build runs again once the slot is free.
"""

import pytest

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob
from processing.queue.cancellation import job_cancel_by_operator
from processing.queue.fair_share import FAIR_SHARE_YIELD
from processing.queue.retry_policy import consumed_attempts
from processing.upkeep.reapers import sweep
from tests.factories import ProjectFactory, UserFactory, bearer_token_for
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.builds import looping_build, processes_working_under
from tests.processing.e2e.conftest import RawHttp
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"


def _state(job_id) -> str:
    return ProcessingJob.objects.get(pk=job_id).state


def test_a_waiting_authors_build_takes_the_slot_the_hogs_newer_build_gives_back(owner, protocol_server):
    root = protocol_server.root
    hog = RawHttp(protocol_server.url, bearer_token_for(owner))
    colleague = UserFactory()
    with running_agent(protocol_server.url, root, "--operations", LATEX, "--slots", "2", name="fair") as agent:
        work = root / "fair-work"
        older = looping_build(owner, hog, work, "older")
        newer = looping_build(owner, hog, work, "newer")
        wait_until(lambda: len(processes_working_under(work)) >= 2, what="TeX running both endless builds")
        project = ProjectFactory(owner=colleague, starter=True)
        status, waiting, _ = RawHttp(protocol_server.url, bearer_token_for(colleague)).json(
            "POST", f"/v1/projects/{project.pk}/builds", {}, headers={"Idempotency-Key": "colleague"}
        )
        assert status == 202, waiting
        assert _state(waiting["id"]) == JobState.QUEUED, "both slots are the hog's"

        assert sweep().counts["fair_share_yields_requested"] == 1

        wait_until(lambda: _state(waiting["id"]) == JobState.SUCCEEDED, what="the colleague's build to succeed")
        yielded = ProcessingAttempt.objects.get(job_id=newer, number=1)
        assert (yielded.state, yielded.failure_code) == (AttemptState.RELEASED, FAIR_SHARE_YIELD)
        assert consumed_attempts(ProcessingJob.objects.get(pk=newer)) == 0
        assert _state(older) == JobState.RUNNING, "the hog keeps its share"
        assert ProcessingAttempt.objects.get(job_id=older).state == AttemptState.RUNNING

        wait_until(
            lambda: ProcessingAttempt.objects.filter(job_id=newer, number=2, state=AttemptState.RUNNING).exists(),
            what="the yielded build to run again once the slot was free",
        )
        for job_id in (older, newer):
            job_cancel_by_operator(job_id=job_id)
        wait_until(lambda: {_state(older), _state(newer)} == {JobState.CANCELLED}, what="the endless builds to end")
        wait_until(lambda: not processes_working_under(work), what="their TeX to stop")
        assert agent.poll() is None, "the agent kept running throughout"
