import uuid

from django.db import models
from django.db.models import Q


class SessionState(models.TextChoices):
    ACTIVE = "active"
    DRAINING = "draining"
    EXPIRED = "expired"
    CLOSED = "closed"


class WorkerSession(models.Model):
    """A registered worker agent. Liveness comes from heartbeats; capacity is computed per claim."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    identity = models.CharField(max_length=64, help_text="The deployment's worker identity it authenticated as.")
    instance = models.CharField(max_length=128)
    protocol_version = models.CharField(max_length=16)
    state = models.CharField(max_length=16, choices=SessionState.choices, default=SessionState.ACTIVE)
    registered_at = models.DateTimeField()
    last_heartbeat_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(state__in=SessionState.values), name="session_state_known")]
        indexes = [
            models.Index(fields=["expires_at"], condition=Q(state__in=["active", "draining"]), name="session_live")
        ]

    def __str__(self) -> str:
        return f"{self.identity}/{self.instance}"


class WorkerProcessor(models.Model):
    """A processor a session declared: the operation it implements, its contract, and its slot ceiling."""

    session = models.ForeignKey(WorkerSession, on_delete=models.CASCADE, related_name="processors")
    operation = models.CharField(max_length=64)
    processor_contract = models.CharField(max_length=255)
    runtime_version = models.CharField(max_length=128, blank=True, default="")
    slots = models.IntegerField()
    healthy = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "operation"], name="processor_one_per_operation"),
            models.CheckConstraint(condition=Q(slots__gte=1, slots__lte=256), name="processor_slots_bounded"),
        ]

    def __str__(self) -> str:
        return f"{self.operation} × {self.slots}"


class TransferKind(models.TextChoices):
    DOWNLOAD_INPUT = "download_input"
    UPLOAD_OUTPUT = "upload_output"


class TransferTicket(models.Model):
    """A single-purpose, expiring permission to move bytes for one claim. Only the secret's hash is kept."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    secret_sha256 = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=TransferKind.choices)
    attempt = models.ForeignKey("processing.ProcessingAttempt", on_delete=models.CASCADE, related_name="tickets")
    role = models.CharField(max_length=32, blank=True, default="")
    media_type = models.CharField(max_length=128, blank=True, default="")
    filename = models.CharField(max_length=255, blank=True, default="")
    max_bytes = models.BigIntegerField()
    expected_sha256 = models.CharField(max_length=64, blank=True, default="")
    expected_size = models.BigIntegerField(null=True, blank=True)
    blob = models.ForeignKey(
        "processing.ProcessingBlob", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(kind__in=TransferKind.values), name="ticket_kind_known")]
        indexes = [models.Index(fields=["expires_at"], name="ticket_expiry")]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class WorkerRequest(models.Model):
    """The stored response of a mutating worker request, so a retry gets it back byte for byte; without a
    response yet, the request in progress, held until ``expires_at`` (processing/protocol/replay.py)."""

    identity = models.CharField(max_length=64)
    request_id = models.CharField(max_length=64)
    route = models.CharField(max_length=64)
    payload_sha256 = models.CharField(max_length=64)
    response_status = models.IntegerField(null=True)
    response_body = models.BinaryField(null=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    # While in progress: the backend of the holding process's LISTEN connection (pid and start), gone with it
    holder_pid = models.IntegerField(null=True)
    holder_started = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["identity", "request_id"], name="worker_request_unique_per_identity")
        ]
        indexes = [models.Index(fields=["expires_at"], name="worker_request_expiry")]

    def __str__(self) -> str:
        return f"{self.identity}:{self.request_id}"
