"""The agent's claim loop: it keeps claiming through Core's refusals and outages, and drains cleanly."""

import threading
import time

import pytest

from quire_worker.agent import AgentSettings, WorkerAgent
from quire_worker.processors.echo import EchoProcessor
from quire_worker.testing import (
    InMemoryCore,
    bundle_archive,
    core_refuses,
    core_unreachable,
    session_gone,
)
from tests.waiting import wait_until

BUNDLE = bundle_archive({"main.tex": b"\\documentclass{article}"})
GENEROUS_SECONDS = 60.0


@pytest.fixture
def core() -> InMemoryCore:
    return InMemoryCore()


@pytest.fixture
def agent_for(core, tmp_path):
    """``agent_for(max_jobs=...)``: an agent on the in-memory Core that retries at once."""

    def make(*, max_jobs: int, processors=None, acquire_wait_seconds: float = 0, slots: int = 1) -> WorkerAgent:
        settings = AgentSettings(
            instance="test-agent",
            work_root=tmp_path / "work",
            max_jobs=max_jobs,
            slots=slots,
            acquire_wait_seconds=acquire_wait_seconds,
            retry_initial_seconds=0,
            retry_max_seconds=0,
        )
        return WorkerAgent(client=core, processors=processors or [EchoProcessor()], executor=None, settings=settings)

    return make


def run_to_completion(agent: WorkerAgent) -> None:
    """Run the agent until it stops by itself; fail if it raised or never stopped."""
    outcome = {}

    def run():
        try:
            outcome["exit"] = agent.run()
        except Exception as exc:  # reported by the assertion below
            outcome["exit"] = exc

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(GENEROUS_SECONDS)
    assert outcome == {"exit": 0}


def test_the_agent_claims_after_registration_fails(core, agent_for):
    core.fail_next("register", core_unreachable(), core_refuses("processor_out_of_scope"), core_unreachable())
    claim_id = core.queue_claim(BUNDLE)

    run_to_completion(agent_for(max_jobs=1))

    assert core.reports == [("delivery", claim_id)]


def test_the_agent_claims_after_acquiring_fails(core, agent_for):
    core.fail_next("acquire", core_refuses("request_id_reused"), core_unreachable(), core_refuses("validation_error"))
    claim_id = core.queue_claim(BUNDLE)

    run_to_completion(agent_for(max_jobs=1))

    assert core.reports == [("delivery", claim_id)]


def test_the_agent_registers_again_when_its_session_is_gone_even_if_that_fails_at_first(core, agent_for):
    core.fail_next("acquire", session_gone())
    core.fail_next("register", None, core_unreachable(), core_refuses("processor_out_of_scope"))
    claim_id = core.queue_claim(BUNDLE)

    run_to_completion(agent_for(max_jobs=1))

    assert core.reports == [("delivery", claim_id)]
    assert core.sessions == ["session-1", "session-2"]


class OtherEchoProcessor(EchoProcessor):
    operation = "test.other/v1"


def test_a_long_poll_for_one_operation_does_not_keep_the_others_freed_slots_idle(core, agent_for):
    """With echo's one slot busy, the agent long-polls offering only the other operation; echo's slot,
    freed meanwhile, is offered at once all the same (not after that long-poll ends)."""
    claim_ids = [core.queue_claim(BUNDLE) for _ in range(3)]
    # Far longer than the test waits: a freed slot that waited for this long-poll would fail it.
    agent = agent_for(max_jobs=3, processors=[EchoProcessor(), OtherEchoProcessor()], acquire_wait_seconds=600)
    runner = threading.Thread(target=agent.run, daemon=True)
    runner.start()

    delivered = core.wait_for_reports(3, timeout=GENEROUS_SECONDS)
    surplus = core.queue_claim(BUNDLE, operation=OtherEchoProcessor.operation)  # ends the other long-poll
    runner.join(GENEROUS_SECONDS)

    assert sorted(claim_id for _, claim_id in delivered) == claim_ids
    assert core.reports[3:] == [("release", surplus)], "a claim beyond the job limit is given back, not run"
    assert not runner.is_alive()


def test_one_acquire_fills_every_free_slot(core, agent_for):
    claim_ids = [core.queue_claim(BUNDLE) for _ in range(4)]

    run_to_completion(agent_for(max_jobs=3, slots=3))

    assert core.acquired_sizes[0] == 3, core.acquired_sizes
    assert sorted(report[1] for report in core.reports) == claim_ids[:3]
    assert core.reports == [("delivery", claim_id) for _, claim_id in core.reports], "every claim ran to delivery"


def test_a_delivery_refills_its_own_slot_so_a_busy_agent_does_not_acquire_again(core, agent_for):
    claim_ids = [core.queue_claim(BUNDLE) for _ in range(4)]

    run_to_completion(agent_for(max_jobs=4, slots=1))

    assert core.reports == [("delivery", claim_id) for claim_id in claim_ids], "one after the other, in order"
    assert core.acquired_sizes == [1], "only the first claim needed an acquire"
    assert core.delivery_handouts == [1, 1, 1, 0], "the last delivery asks for nothing: the job limit is reached"


def test_a_slot_refilled_by_a_delivery_is_never_offered_twice(core, agent_for):
    """The permit passes from the delivered run to its successor; were it also handed back to the pool, the
    claim loop (polling without a wait here) would take a second claim for the one slot."""
    for _ in range(8):
        core.queue_claim(BUNDLE)
    agent = agent_for(max_jobs=8, slots=2)

    run_to_completion(agent)

    assert [kind for kind, *_ in core.reports] == ["delivery"] * 8
    assert core.most_outstanding <= 2, core.most_outstanding
    assert agent.free == {EchoProcessor.operation: 2}


def test_a_claim_handed_out_with_a_delivery_as_the_agent_drains_is_given_back(core, agent_for):
    first, second = core.queue_claim(BUNDLE), core.queue_claim(BUNDLE)
    agent = agent_for(max_jobs=None)
    core.while_delivering = agent.draining.set

    run_to_completion(agent)

    assert core.reports == [("delivery", first), ("release", second)], "the second claim was not run"
    assert agent.free == {EchoProcessor.operation: 1}


def test_finished_jobs_leave_no_threads_behind(core, agent_for):
    claim_ids = [core.queue_claim(BUNDLE) for _ in range(3)]
    agent = agent_for(max_jobs=3)

    run_to_completion(agent)

    assert sorted(report[1] for report in core.reports) == claim_ids
    assert agent.threads == set()


def test_a_claim_arriving_as_the_agent_drains_is_given_back_and_a_failed_release_does_not_stop_the_drain(
    core, agent_for
):
    agent = agent_for(max_jobs=None)
    core.while_acquiring = agent.draining.set
    core.fail_next("release", core_unreachable())
    core.queue_claim(BUNDLE)

    run_to_completion(agent)

    assert (core.reports, core.uploads) == ([], [])  # the claim was not run


def test_a_lost_claim_stops_its_processor_but_a_finished_one_is_left_alone(core, agent_for, caplog):
    from quire_worker.job_run import ActiveClaim

    agent = agent_for(max_jobs=1)
    running, finished = ActiveClaim(claim={"claim_id": "running"}), ActiveClaim(claim={"claim_id": "finished"})
    agent.active[running.claim_id] = running  # the finished one was delivered and left `active`

    core.fail_next("claim_heartbeat", core_refuses("claim_lost"), core_refuses("claim_lost"))
    agent._claim_heartbeat(running)
    agent._claim_heartbeat(finished)

    assert running.lost.is_set() and running.cancel.is_set()
    assert not finished.lost.is_set() and not finished.cancel.is_set()
    assert [r.claim for r in caplog.records if r.getMessage() == "claim lost; stopping its processor"] == ["running"]


def test_a_claim_whose_delivery_is_on_its_way_is_not_reported_lost(core, agent_for, caplog):
    from quire_worker.job_run import ActiveClaim

    agent = agent_for(max_jobs=1)
    delivering = ActiveClaim(claim={"claim_id": "delivering"})
    agent.active[delivering.claim_id] = delivering  # still active: the delivery's answer is not back yet
    delivering.finishing.set()

    core.fail_next("claim_heartbeat", core_refuses("claim_lost"))
    agent._claim_heartbeat(delivering)

    assert not delivering.lost.is_set() and not delivering.cancel.is_set()
    assert not [r for r in caplog.records if r.getMessage() == "claim lost; stopping its processor"]


# --- cancellations ---------------------------------------------------------------------------------
LONG_RUNNING = bundle_archive({"echo-delay.txt": b"*:600"})


def _running(agent: WorkerAgent, claim_id: str) -> None:
    wait_until(lambda: claim_id in agent.active, timeout=GENEROUS_SECONDS)


def test_a_cancellation_reaches_a_running_claim_by_its_wake_up_without_a_heartbeat(core, agent_for):
    core.heartbeat_seconds = 600  # no claim heartbeat comes while this test runs
    claim_id = core.queue_claim(LONG_RUNNING)
    agent = agent_for(max_jobs=1)
    agent.heartbeat_seconds = 600  # nor the agent's first, before it registers
    runner = threading.Thread(target=agent.run, daemon=True)
    runner.start()
    _running(agent, claim_id)

    requested = time.monotonic()
    core.request_cancellation(claim_id)
    reports = core.wait_for_reports(1, timeout=GENEROUS_SECONDS)
    stopped_after = time.monotonic() - requested
    runner.join(GENEROUS_SECONDS)

    assert reports == [("failure", claim_id, "worker_interrupted", "cancelled")]
    assert core.claim_heartbeats == [], "the heartbeat carried nothing: the wake-up did"
    assert stopped_after < 5, f"stopped {stopped_after:.1f} s after the request"


def test_claims_already_stopping_do_not_end_the_next_wait_but_a_new_cancellation_does(core, agent_for):
    from quire_worker.job_run import ActiveClaim

    agent = agent_for(max_jobs=1)
    agent.session_id = "session-1"
    stopping, running = ActiveClaim(claim={"claim_id": "stopping"}), ActiveClaim(claim={"claim_id": "running"})
    stopping.cancel.set()
    agent.active = {claim.claim_id: claim for claim in (stopping, running)}
    core.request_cancellation("stopping")

    poll = threading.Thread(target=lambda: agent._cancellations_once(*agent._claims_running()), daemon=True)
    poll.start()
    wait_until(lambda: core.cancellation_polls, timeout=GENEROUS_SECONDS)
    poll.join(0.2)
    waited = poll.is_alive()
    core.request_cancellation("running")
    poll.join(GENEROUS_SECONDS)

    assert core.cancellation_polls == [["stopping"]]
    assert waited, "a claim the agent already stops did not answer the poll at once"
    assert running.cancel.is_set() and not poll.is_alive()


def test_without_the_wake_up_the_claim_heartbeat_still_carries_a_cancellation(core, agent_for):
    core.fail_next("cancellations", *[core_refuses("not_found")] * 1000)  # a Core that does not know the call
    claim_id = core.queue_claim(LONG_RUNNING)
    agent = agent_for(max_jobs=1)
    agent.heartbeat_seconds = 0.1  # the first beat, before registration tells it Core's interval
    runner = threading.Thread(target=agent.run, daemon=True)
    runner.start()
    _running(agent, claim_id)

    core.request_cancellation(claim_id)
    reports = core.wait_for_reports(1, timeout=GENEROUS_SECONDS)
    runner.join(GENEROUS_SECONDS)

    assert reports == [("failure", claim_id, "worker_interrupted", "cancelled")]
    assert claim_id in core.claim_heartbeats
