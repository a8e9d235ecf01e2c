"""The worker agent loop: register, heartbeat, offer free permits, run claims, hear of cancellations, drain.

Capacity lives here as a local count of free permits per processor; the agent
offers them when it acquires, and Core intersects the offer with what it
knows. The first SIGTERM drains (no new claims; running ones finish), the
second releases what is still running and exits.
"""

import logging
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from quire_worker.client import CoreClient, CoreError, CoreUnavailable
from quire_worker.contracts import Executor, Processor
from quire_worker.job_run import ActiveClaim, JobRun

logger = logging.getLogger(__name__)


@dataclass
class AgentSettings:
    instance: str
    work_root: Path
    slots: int = 1
    max_jobs: int | None = None
    acquire_wait_seconds: float = 20.0
    # How long each cancellation long-poll may wait; Core answers sooner when a cancellation is requested.
    cancellation_wait_seconds: float = 25.0
    # After a failed claiming round the agent waits this long, doubling up to the maximum.
    retry_initial_seconds: float = 0.5
    retry_max_seconds: float = 30.0


SESSION_LOST = ("session_gone", "session_not_found")


class WorkerAgent:
    def __init__(self, *, client: CoreClient, processors: list[Processor], executor: Executor, settings: AgentSettings):
        self.client, self.executor, self.settings = client, executor, settings
        self.processors = {processor.operation: processor for processor in processors}
        self.free = dict.fromkeys(self.processors, settings.slots)
        self.active: dict[str, ActiveClaim] = {}
        self.threads: set[threading.Thread] = set()
        self.condition = threading.Condition()
        self.draining = threading.Event()
        self.stopping = threading.Event()
        self.session_id: str | None = None
        self.heartbeat_seconds = 5.0
        self.started_jobs = 0
        self.registering = threading.Lock()

    # --- lifecycle -------------------------------------------------------------------------------
    def install_signal_handlers(self) -> None:
        def on_term(signum, frame):
            if self.draining.is_set():
                logger.warning("second signal: releasing running claims and exiting")
                self.stopping.set()
            else:
                logger.info("draining: no new claims; running jobs finish")
                self.draining.set()
            with self.condition:
                self.condition.notify_all()

        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGINT, on_term)

    def run(self) -> int:
        threading.Thread(target=self._heartbeat_loop, name="heartbeats", daemon=True).start()
        threading.Thread(target=self._cancellation_loop, name="cancellations", daemon=True).start()
        threading.Thread(target=self._core_told_of_drain, name="drain", daemon=True).start()
        # One claim loop per processor: a long-poll offering one operation's permits must not keep
        # another operation's permits, freed meanwhile, from being offered until it returns.
        loops = [
            threading.Thread(target=self._claim_loop, args=(operation,), name=f"claims-{operation}")
            for operation in self.processors
        ]
        for loop in loops:
            loop.start()
        for loop in loops:
            loop.join()
        self._drain()
        return 0

    def _claim_loop(self, operation: str) -> None:
        delay = self.settings.retry_initial_seconds
        while not self.draining.is_set() and not self._enough_jobs():
            try:
                self._claim_once(operation)
            except Exception:
                # Leaving the loop would leave a process that looks alive (heartbeats, running
                # jobs) but never claims again; whatever failed, back off and go on.
                logger.exception("claiming failed; retrying", extra={"session": self.session_id, "retry_in": delay})
                self.draining.wait(delay)
                delay = min(delay * 2, self.settings.retry_max_seconds)
            else:
                delay = self.settings.retry_initial_seconds

    def _claim_once(self, operation: str) -> None:
        """Register when there is no session; otherwise offer the operation's free permits once."""
        if self.session_id is None:
            self._register_unless_registered()
            return
        permits = self._wait_for_free_permits(operation)
        if permits:
            self._acquire_once({operation: permits})

    def _enough_jobs(self) -> bool:
        return self.settings.max_jobs is not None and self.started_jobs >= self.settings.max_jobs

    def _claims_wanted(self, permits: int) -> int:
        """As many claims as ``permits``, but none beyond ``max_jobs`` (they would only be released again)."""
        if self.settings.max_jobs is None:
            return permits
        return max(1, min(permits, self.settings.max_jobs - self.started_jobs))

    def _register_unless_registered(self) -> None:
        with self.registering:  # the first claim loop to find no session registers; the others wait for it
            if self.session_id is None:
                self._register()

    def _register(self) -> None:
        declarations = [
            {
                "operation": p.operation,
                "processor_contract": p.contract,
                "runtime_version": p.runtime_version,
                "slots": self.settings.slots,
            }
            for p in self.processors.values()
        ]
        # Only the claim loop registers, so a slow registration never holds up the claims' heartbeats.
        session = self.client.register(instance=self.settings.instance, processors=declarations)
        with self.condition:
            self.session_id = session["session_id"]
            self.heartbeat_seconds = float(session.get("heartbeat_seconds", 5.0))
        logger.info("registered", extra={"session": self.session_id, "operations": sorted(self.processors)})

    # --- acquiring -------------------------------------------------------------------------------
    def _wait_for_free_permits(self, operation: str) -> int:
        with self.condition:
            self.condition.wait_for(
                lambda: self.free[operation] > 0 or self.draining.is_set() or self.stopping.is_set(),
                timeout=1.0,
            )
            return self.free[operation] if not self.draining.is_set() else 0

    def _acquire_once(self, offers: dict[str, int]) -> None:
        """Acquire with ``offers`` and start what comes; CoreError or CoreUnavailable when Core fails us.

        As many claims as permits are offered may come back at once: one round trip fills every free slot.
        """
        if self._enough_jobs():
            return
        session_id = self.session_id
        try:
            claims = self.client.acquire(
                session_id=session_id,
                offers=offers,
                wait_seconds=self.settings.acquire_wait_seconds,
                max_claims=self._claims_wanted(sum(offers.values())),
            )
        except CoreError as exc:
            if exc.code not in SESSION_LOST:
                raise
            self._session_lost(session_id)
            return
        # The whole batch starts under the lock, so a run of it delivering meanwhile counts its siblings when
        # it asks whether the job limit leaves room for a successor.
        with self.condition:
            surplus = self._start_all(claims)
        for claim in surplus:
            self._release(claim["claim_id"])

    def _session_lost(self, session_id: str | None) -> None:
        """Forget ``session_id`` unless it was already replaced; the claim loop registers anew."""
        with self.condition:
            if self.session_id == session_id:
                logger.warning("session lost; registering again", extra={"session": session_id})
                self.session_id = None
                self.condition.notify_all()

    def _start_all(self, claims: list[dict], *, permit_held: bool = False) -> list[dict]:
        """Start each claim unless draining or at the job limit (other claim loops and deliveries take claims
        too); return those not started, to be released outside the lock."""
        return [claim for claim in claims if self.draining.is_set() or not self._start(claim, permit_held=permit_held)]

    def _start(self, claim: dict, *, permit_held: bool = False) -> bool:
        """Run ``claim`` on a thread of its own; False (nothing started) once the job limit is reached.

        ``permit_held``: the claim came with a delivery that offered its own run's permit, which passes on
        to this claim instead of going back to the pool (where a claim loop could offer it a second time).
        """
        operation = claim["operation"]
        active = ActiveClaim(claim=claim)
        with self.condition:
            if self._enough_jobs():
                return False
            if not permit_held:
                self.free[operation] -= 1
            self.active[active.claim_id] = active
            self.started_jobs += 1
            self.condition.notify_all()  # the cancellation loop waits for running claims
        run = JobRun(
            client=self.client,
            active=active,
            processor=self.processors[operation],
            executor=self.executor,
            work_root=self.settings.work_root,
            successor_wanted=self._successor_wanted,
        )
        thread = threading.Thread(target=self._run_and_free, args=(run, active), name=f"job-{active.claim_id[:8]}")
        with self.condition:
            self.threads.add(thread)
        thread.start()
        return True

    def _successor_wanted(self) -> bool:
        with self.condition:
            return not (self.draining.is_set() or self.stopping.is_set() or self._enough_jobs())

    def _run_and_free(self, run: JobRun, active: ActiveClaim) -> None:
        try:
            run.execute()
        finally:
            with self.condition:
                self.active.pop(active.claim_id, None)
                self.threads.discard(threading.current_thread())
                # The delivery offered this run's permit only: it passes to the claim that came back, if that runs.
                surplus = self._start_all(run.successors, permit_held=True)
                if surplus or not run.successors:
                    self.free[active.claim["operation"]] += 1
                self.condition.notify_all()
            for claim in surplus:
                self._release(claim["claim_id"])

    # --- heartbeats ------------------------------------------------------------------------------
    def _heartbeat_loop(self) -> None:
        # This thread keeps the session and every claim alive: nothing may end it but the process.
        while True:
            time.sleep(self.heartbeat_seconds)
            try:
                self._session_heartbeat()
            except Exception:
                logger.exception("session heartbeat failed; trying again next beat")
            for active in list(self.active.values()):
                try:
                    self._claim_heartbeat(active)
                except Exception:
                    logger.exception("claim heartbeat failed", extra={"claim": active.claim_id})

    def _session_heartbeat(self) -> None:
        session_id = self.session_id
        if session_id is None:
            return
        try:
            session = self.client.session_heartbeat(session_id=session_id, health=dict.fromkeys(self.processors, True))
        except CoreError as exc:
            if exc.code in SESSION_LOST and not self.draining.is_set():
                self._session_lost(session_id)
        except CoreUnavailable:
            logger.error("core unreachable for heartbeats")
        else:
            if session.get("state") == "draining" and not self.draining.is_set():
                # An operator drained this session: no new claims; running jobs finish, then the agent exits.
                logger.info(
                    "core drained this session: no new claims; running jobs finish", extra={"session": session_id}
                )
                self.draining.set()
                with self.condition:
                    self.condition.notify_all()

    def _claim_heartbeat(self, active: ActiveClaim) -> None:
        try:
            lease = self.client.claim_heartbeat(claim_id=active.claim_id, phase=active.phase)
        except CoreError as exc:
            if exc.code == "claim_lost":
                if active.claim_id not in self.active or active.finishing.is_set():
                    return  # the job was delivered (or failed) while this heartbeat was on its way: nothing is lost
                logger.warning("claim lost; stopping its processor", extra={"claim": active.claim_id})
                active.lost.set()
                active.cancel.set()
            return
        except CoreUnavailable:
            return
        if lease.get("cancellation_requested"):
            active.cancel.set()

    # --- cancellations ---------------------------------------------------------------------------
    def _cancellation_loop(self) -> None:
        # While claims run, one long-poll per session is open, and Core answers it the moment a claim's
        # cancellation is requested: a cancel lands without waiting for the next claim heartbeat, which still
        # carries it should this fail. Like the heartbeats, nothing may end this thread but the process.
        while True:
            session_id, known = self._claims_running()
            try:
                self._cancellations_once(session_id, known)
            except Exception:
                logger.exception("waiting for cancellations failed; heartbeats carry them meanwhile")
                time.sleep(self.heartbeat_seconds)

    def _claims_running(self) -> tuple[str, list[str]]:
        """Once a session holds running claims: that session, and the claims already being stopped."""
        with self.condition:
            self.condition.wait_for(lambda: self.session_id is not None and self.active)
            return self.session_id, [claim_id for claim_id, active in self.active.items() if active.cancel.is_set()]

    def _cancellations_once(self, session_id: str, known: list[str]) -> None:
        try:
            claim_ids = self.client.cancellations(
                session_id=session_id, known_claim_ids=known, wait_seconds=self.settings.cancellation_wait_seconds
            )
        except (CoreError, CoreUnavailable) as exc:
            # A session that ended (the claim loop registers anew), or a Core without this call: wait a beat.
            logger.warning("could not wait for cancellations", extra={"session": session_id, "error": str(exc)})
            time.sleep(self.heartbeat_seconds)
            return
        with self.condition:
            requested = [self.active[claim_id] for claim_id in claim_ids if claim_id in self.active]
        for active in requested:
            if not active.cancel.is_set():
                logger.info("cancellation requested; stopping its processor", extra={"claim": active.claim_id})
                active.cancel.set()

    # --- draining --------------------------------------------------------------------------------
    def _core_told_of_drain(self) -> None:
        """Tell Core at once when the drain starts: it answers the claim loops' long-polls with nothing, so an
        idle agent stops in a moment instead of waiting out ``--acquire-wait``."""
        self.draining.wait()
        self._tell_core_of_drain()

    def _tell_core_of_drain(self) -> None:
        try:
            if self.session_id is not None:
                self.client.drain(session_id=self.session_id)
        except (CoreError, CoreUnavailable):
            logger.warning("could not tell core about the drain")

    def _drain(self) -> None:
        self._tell_core_of_drain()  # again: the drain may have come from Core or from the job limit
        with self.condition:
            running = list(self.threads)
        for thread in running:
            while thread.is_alive():
                thread.join(timeout=0.5)
                if self.stopping.is_set():
                    self._release_running()
                    return

    def _release_running(self) -> None:
        for active in list(self.active.values()):
            active.lost.set()
            active.cancel.set()
            self._release(active.claim_id)

    def _release(self, claim_id: str) -> None:
        try:
            self.client.release(claim_id=claim_id)
        except (CoreError, CoreUnavailable):
            logger.warning("could not release a claim; its lease will expire", extra={"claim": claim_id})
