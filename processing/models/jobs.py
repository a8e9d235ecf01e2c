import uuid

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models import Case, Count, Exists, Func, OuterRef, Q, Value, When
from django.db.models.functions import Cast, Concat, Now

import quire_wire
from processing.models.blobs import ProcessingBlob


class JobState(models.TextChoices):
    PREPARING = "preparing"
    QUEUED = "queued"
    RUNNING = "running"
    FINALIZING = "finalizing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


# Tuples, not sets: their order ends up in migrations and must not vary between runs.
# Results kept for the machinery, never listed, downloaded or published as the project's output.
INTERNAL_ARTIFACT_ROLES = ("warm",)
TERMINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.EXPIRED)
ACTIVE_STATES = (JobState.PREPARING, JobState.QUEUED, JobState.RUNNING, JobState.FINALIZING)


class Phase(models.TextChoices):
    CAPTURING_INPUT = "capturing_input"
    WAITING_FOR_WORKER = "waiting_for_worker"
    PROCESSING = "processing"
    UPLOADING_RESULT = "uploading_result"
    VALIDATING_RESULT = "validating_result"
    PUBLISHING_RESULT = "publishing_result"
    COMPLETE = "complete"


# The worker protocol's failure vocabulary (quire_wire), as choices: the same names and values, labels from the names.
FailureClass = models.TextChoices(
    "FailureClass", [(member.name, member.value) for member in quire_wire.FailureClass], module=__name__
)


# Failures caused by the content: the same input fails the same way, so a fix and a new job is the way on,
# not a retry of the same input (Retry is offered only for the others).
CONTENT_FAILURES = frozenset(
    {FailureClass.PROCESSOR_REJECTED, FailureClass.UNSUPPORTED_DEPENDENCY, FailureClass.INVALID_INPUT}
)


class AttemptState(models.TextChoices):
    RUNNING = "running"
    DELIVERED = "delivered"
    FAILED = "failed"
    RELEASED = "released"
    LOST = "lost"
    CANCELLED = "cancelled"


class JobQuerySet(models.QuerySet):
    def active(self):
        return self.filter(state__in=ACTIVE_STATES)

    def terminal(self):
        return self.filter(state__in=TERMINAL_STATES)

    def claimable(self, operations):
        """Queued jobs of these operations whose retry backoff is over, oldest first (docs/architecture.md §4).

        ``operations`` may be a list or a subquery of operation names; "now" is the database's clock.
        """
        return (
            self.filter(state=JobState.QUEUED, operation__in=operations)
            .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=Now()))
            .order_by("created_at")
        )

    def in_partition(self, partition):
        """Jobs of the partition's operations (processing/kernel/partitions.py)."""
        return self.filter(_in_partition(partition))

    def within_running_limits(self, partitions):
        """Jobs whose requester and project run fewer jobs of the job's partition than its limits, as this
        statement sees it (``partitions``: those of the jobs in question, processing/kernel/partitions.py).

        The claim makes this exact under concurrency: it locks the candidates' requesters and projects and
        counts again (processing/queue/claims.py).
        """
        within = None
        for partition in partitions:
            running = ProcessingJob.objects.filter(state=JobState.RUNNING).in_partition(partition)
            saturated_requesters = (
                running.values("requester_id")
                .annotate(running=Count("id"))
                .filter(running__gte=partition.running_jobs_per_requester)
            )
            saturated_projects = (
                running.filter(project_id__isnull=False)
                .values("project_id")
                .annotate(running=Count("id"))
                .filter(running__gte=partition.running_jobs_per_project)
            )
            branch = (
                _in_partition(partition)
                & ~Q(requester_id__in=saturated_requesters.values("requester_id"))
                & (Q(project_id__isnull=True) | ~Q(project_id__in=saturated_projects.values("project_id")))
            )
            within = branch if within is None else within | branch
        return self.none() if within is None else self.filter(within)

    def within_fair_share(self, operations):
        """Jobs whose requester does not hold its share of their operation's slots while another requester's
        job of that operation waits: the share is the slots registered for the operation by live processors
        divided among the requesters with work of it running or queued, rounded up, at least one (the
        database function ``processing_fair_share``, processing/queue/sql/fair_share.sql), so a requester
        with many long jobs cannot keep everybody else waiting. The maintenance loop enforces the same share
        against running work (processing/queue/fair_share.py).

        One hashed lookup per statement, keyed by requester and operation as text: the claim walks the queue
        from its head and tests each row against it (a correlated subquery would be run for every row the
        walk passes, a hog's whole queue included).
        """
        # Below or above the holder's id: two probes of job_queued_by_requester, never a walk past its own queue.
        queued = ProcessingJob.objects.filter(state=JobState.QUEUED, operation=OuterRef("operation"))
        others_waiting = Exists(queued.filter(requester_id__lt=OuterRef("requester_id"))) | Exists(
            queued.filter(requester_id__gt=OuterRef("requester_id"))
        )
        # Per group, in HAVING: the share is computed once per requester and operation (as a grouping key it
        # was computed for every running row), and another requester's waiting job only where it is held.
        share = _OfTheGroup(fair_share_of("operation"), output_field=models.IntegerField())
        holding_their_share = (
            ProcessingJob.objects.filter(state=JobState.RUNNING, operation__in=operations)
            .values("requester_id", "operation")
            .annotate(running=Count("id"))
            .annotate(holds=Case(When(running__gte=share, then=others_waiting), default=Value(False)))
            .filter(holds=True)
            .annotate(key=_requester_operation_key())
            .values("key")
        )
        return self.alias(fair_share_key=_requester_operation_key()).exclude(fair_share_key__in=holding_their_share)


def fair_share_of(operation) -> Func:
    """A requester's share of ``operation``'s slots (processing/queue/sql/fair_share.sql)."""
    return Func(operation, function="processing_fair_share", output_field=models.IntegerField())


class _OfTheGroup(Func):
    """An expression of grouped columns only, used in HAVING: Django would otherwise group by it too, and a
    grouping key is computed for every row (here a subquery per running job, not per requester)."""

    template = "%(expressions)s"

    def get_group_by_cols(self):
        return []


def _in_partition(partition) -> Q:
    if partition.is_default:
        return ~Q(operation__in=partition.others) if partition.others else Q()
    return Q(operation__in=partition.operations)


def _requester_operation_key():
    return Concat(Cast("requester_id", models.CharField()), Value(":"), "operation", output_field=models.CharField())


class ProcessingJob(models.Model):
    """The user-visible aggregate: one explicit operation with a durable outcome."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    operation = models.CharField(max_length=64)
    requester_id = models.IntegerField()
    project_id = models.UUIDField(null=True, blank=True)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.PREPARING)
    phase = models.CharField(max_length=32, choices=Phase.choices, default=Phase.CAPTURING_INPUT)
    options = models.JSONField(default=dict)
    options_digest = models.CharField(max_length=64)
    input_profile = models.CharField(max_length=32, blank=True, default="")
    input_filename = models.CharField(max_length=255, blank=True, default="")
    input_blob = models.ForeignKey(ProcessingBlob, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    input_digest = models.CharField(max_length=64, blank=True, default="")
    # The auxiliary files of the requester's previous build of the project (a LaTeX build's ``warm`` result),
    # captured with the job as an input of its own: the build starts from them (processing/submission/warm_start.py).
    warm_start_blob = models.ForeignKey(
        ProcessingBlob, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # How the build that succeeded started: warm, clean, or fallback (a warm start rebuilt from scratch).
    build_start = models.CharField(max_length=16, blank=True, default="", db_default="")
    # What a project capture froze: {"generation": n, "documents": [[path, version], …]} (text documents only).
    captured = models.JSONField(default=dict, blank=True)
    processor_contract = models.CharField(max_length=255, blank=True, default="")
    cache_hit = models.BooleanField(default=False)
    reused_from_id = models.UUIDField(null=True, blank=True)
    retry_of_id = models.UUIDField(null=True, blank=True)
    # While preparing: until when the submitting request holds the preparation (processing/submission/submit.py)
    preparation_lease_until = models.DateTimeField(null=True, blank=True)
    attempt_count = models.IntegerField(default=0)
    max_attempts = models.IntegerField(default=3)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    cancellation_requested = models.BooleanField(default=False)
    failure_class = models.CharField(max_length=32, blank=True, default="")
    failure_code = models.CharField(max_length=64, blank=True, default="")
    failure_message = models.TextField(blank=True, default="")
    diagnostic_log = models.TextField(blank=True, default="")
    diagnostics = models.JSONField(default=list)
    result_project_id = models.UUIDField(null=True, blank=True)
    finalization_token = models.UUIDField(null=True, blank=True)
    finalization_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    deadline_at = models.DateTimeField(null=True, blank=True, help_text="Preparation or queue-wait deadline.")

    objects = JobQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(state__in=JobState.values), name="job_state_known"),
            models.CheckConstraint(condition=Q(phase__in=Phase.values), name="job_phase_known"),
            models.CheckConstraint(
                condition=Q(failure_class="") | Q(failure_class__in=FailureClass.values),
                name="job_failure_class_known",
            ),
            models.CheckConstraint(
                condition=Q(state__in=TERMINAL_STATES, completed_at__isnull=False)
                | (~Q(state__in=TERMINAL_STATES) & Q(completed_at__isnull=True)),
                name="job_completed_at_iff_terminal",
            ),
            models.CheckConstraint(
                condition=~Q(state=JobState.FAILED) | ~Q(failure_class=""), name="job_failed_has_class"
            ),
            models.CheckConstraint(
                condition=~Q(state__in=[JobState.QUEUED, JobState.RUNNING, JobState.FINALIZING])
                | Q(input_blob__isnull=False),
                name="job_claimable_has_input",
            ),
            models.CheckConstraint(
                condition=~Q(state=JobState.FINALIZING) | Q(finalization_token__isnull=False),
                name="job_finalizing_has_token",
            ),
            models.CheckConstraint(
                condition=~Q(cache_hit=True) | Q(reused_from_id__isnull=False), name="job_hit_names_source"
            ),
            models.CheckConstraint(condition=Q(attempt_count__gte=0), name="job_attempt_count_nonnegative"),
        ]
        indexes = [
            models.Index(fields=["created_at"], condition=Q(state="queued"), name="job_queue"),
            models.Index(fields=["requester_id"], condition=Q(state="running"), name="job_running_by_requester"),
            models.Index(
                fields=["operation", "requester_id"], condition=Q(state="queued"), name="job_queued_by_requester"
            ),
            models.Index(fields=["project_id"], condition=Q(state="running"), name="job_running_by_project"),
            models.Index(fields=["requester_id", "-created_at", "-id"], name="job_by_requester"),
            models.Index(fields=["project_id", "-created_at"], name="job_by_project"),
            models.Index(
                fields=["requester_id"],
                condition=Q(state__in=ACTIVE_STATES),
                name="job_active_by_requester",
            ),
            models.Index(
                fields=["project_id"],
                condition=Q(state__in=ACTIVE_STATES),
                name="job_active_by_project",
            ),
            models.Index(fields=["deadline_at"], condition=Q(state__in=["preparing", "queued"]), name="job_deadline"),
            models.Index(
                fields=["preparation_lease_until"], condition=Q(state="preparing"), name="job_preparation_lease"
            ),
            models.Index(
                fields=["finalization_expires_at"],
                condition=Q(state="finalizing"),
                name="job_finalization_expiry",
            ),
            models.Index(
                fields=["project_id", "operation", "input_digest"],
                condition=Q(state="succeeded"),
                name="job_reuse_project",
            ),
            models.Index(
                fields=["requester_id", "operation", "input_digest"],
                condition=Q(state="succeeded"),
                name="job_reuse_requester",
            ),
            models.Index(fields=["completed_at"], condition=Q(completed_at__isnull=False), name="job_retention"),
            # The operators' job list, newest first: unfiltered or by any filter, the page is read from the head
            # of this index; the count of a filter on ended states (and an operation) is read from the next one.
            models.Index(fields=["-created_at", "-id"], name="job_by_created"),
            models.Index(
                fields=["state", "operation", "-created_at", "-id"],
                condition=Q(state__in=TERMINAL_STATES),
                name="job_ended_by_state",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} {self.id} ({self.state})"

    @property
    def shown_artifacts(self) -> list["ProcessingArtifact"]:
        """The artifacts a person or client sees: not the machinery's own (a build's warm start), which only
        the project's next build by the same requester reads. Uses a prefetched ``artifacts`` when there is one."""
        return [artifact for artifact in self.artifacts.all() if artifact.role not in INTERNAL_ARTIFACT_ROLES]

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES


class TerminalCommit(models.Model):
    """One row per job that reached a terminal state: the database forbids a second terminal commit."""

    job = models.OneToOneField(ProcessingJob, primary_key=True, on_delete=models.CASCADE, related_name="terminal")
    state = models.CharField(max_length=16, choices=JobState.choices)
    committed_at = models.DateTimeField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(state__in=TERMINAL_STATES), name="terminal_state_only")]

    def __str__(self) -> str:
        return f"{self.job_id} → {self.state}"


class ProcessingAttempt(models.Model):
    """One execution lease of a job. Every claim creates a new row with a random ``claim_id``."""

    # (job, number) is unique, and that index serves lookups by job: a second index would only slow writes.
    job = models.ForeignKey(ProcessingJob, on_delete=models.CASCADE, related_name="attempts", db_index=False)
    number = models.IntegerField()
    operation = models.CharField(max_length=64)
    claim_id = models.UUIDField(unique=True, default=uuid.uuid4)
    session = models.ForeignKey(
        "processing.WorkerSession", null=True, on_delete=models.SET_NULL, related_name="attempts"
    )
    processor_contract = models.CharField(max_length=255)
    state = models.CharField(max_length=16, choices=AttemptState.choices, default=AttemptState.RUNNING)
    phase = models.CharField(max_length=32, choices=Phase.choices, default=Phase.PROCESSING)
    lease_expires_at = models.DateTimeField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    failure_class = models.CharField(max_length=32, blank=True, default="")
    failure_code = models.CharField(max_length=64, blank=True, default="")
    failure_message = models.TextField(blank=True, default="")
    # When the maintenance loop asked this attempt to give its slot back to another requester's waiting job
    # (processing/queue/fair_share.py): the worker is told as of a cancellation, and its stop requeues the job
    # without using an attempt.
    yield_requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "number"], name="attempt_number_unique_per_job"),
            models.UniqueConstraint(fields=["job"], condition=Q(state="running"), name="attempt_one_running_per_job"),
            models.UniqueConstraint(
                fields=["job"], condition=Q(state="delivered"), name="attempt_one_delivered_per_job"
            ),
            models.CheckConstraint(condition=Q(state__in=AttemptState.values), name="attempt_state_known"),
            models.CheckConstraint(condition=Q(phase__in=Phase.values), name="attempt_phase_known"),
            models.CheckConstraint(condition=Q(number__gte=1), name="attempt_number_positive"),
            models.CheckConstraint(
                condition=Q(failure_class="") | Q(failure_class__in=FailureClass.values),
                name="attempt_failure_class_known",
            ),
        ]
        indexes = [
            models.Index(fields=["lease_expires_at"], condition=Q(state="running"), name="attempt_lease_expiry"),
            # The operators' rollups read a bucket's attempts by these (processing/upkeep/rollups.py). A block
            # range index: attempts are written in start order, and a claim pays next to nothing to keep it.
            BrinIndex(fields=["started_at"], name="attempt_by_start"),
            models.Index(fields=["ended_at"], condition=Q(state="lost"), name="attempt_lost_by_end"),
            models.Index(
                fields=["session", "operation"],
                condition=Q(state="running"),
                name="attempt_live_by_session",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job_id} #{self.number} ({self.state})"


class _OutputFields(models.Model):
    role = models.CharField(max_length=32)
    media_type = models.CharField(max_length=128)
    filename = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    blob = models.ForeignKey(ProcessingBlob, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class StagedOutputQuerySet(models.QuerySet):
    # Outputs of a delivered attempt whose job has ended: published or refused, left only for the reaper,
    # which drops them after its grace period.
    _PUBLISHED = Q(attempt__state=AttemptState.DELIVERED, attempt__job__state__in=TERMINAL_STATES)

    def published(self):
        return self.filter(self._PUBLISHED)

    def unpublished(self):
        return self.exclude(self._PUBLISHED)


class StagedOutput(_OutputFields):
    """An output uploaded under a claim; private until Core's finalizer publishes it."""

    # Looked up through the unique (attempt, role) index.
    attempt = models.ForeignKey(ProcessingAttempt, on_delete=models.CASCADE, related_name="staged", db_index=False)

    objects = StagedOutputQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["attempt", "role"], name="staged_one_per_role_per_attempt")]

    def __str__(self) -> str:
        return f"{self.attempt_id}:{self.role}"


class ProcessingArtifact(_OutputFields):
    """A published result. Cache hits get their own rows pointing at the same blob."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Looked up through the unique (job, role) index.
    job = models.ForeignKey(ProcessingJob, on_delete=models.CASCADE, related_name="artifacts", db_index=False)
    source_attempt = models.ForeignKey(
        ProcessingAttempt, null=True, blank=True, on_delete=models.SET_NULL, related_name="published"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "role"], name="artifact_one_per_role_per_job")]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.role}"


class IdempotencyReservation(models.Model):
    """A creation command's idempotency key, scoped to (actor, endpoint), bound to the command's digest."""

    actor_id = models.IntegerField()
    endpoint = models.CharField(max_length=64)
    key = models.CharField(max_length=128)
    command_digest = models.CharField(max_length=64)
    job = models.ForeignKey(ProcessingJob, null=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["actor_id", "endpoint", "key"], name="idempotency_key_unique_in_scope")
        ]
        indexes = [models.Index(fields=["expires_at"], name="idempotency_expiry")]

    def __str__(self) -> str:
        return f"{self.actor_id}/{self.endpoint}/{self.key}"
