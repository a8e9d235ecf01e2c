"""Request and response shapes of the worker protocol (validated here, documented in its own OpenAPI)."""

import threading

from rest_framework import serializers

from processing.models import FailureClass, Phase

_built_fields = threading.local()


class WorkerRequestSerializer(serializers.Serializer):
    """A worker request's shape. DRF builds a serializer's fields anew for every instance (a deep copy of the
    declared ones, nested serializers and their validators included): three quarters of the time a delivery's
    validation took. Validation keeps no state on the fields, so each thread builds a shape's fields once, bound
    to an instance of its own, and every later instance on that thread validates with them."""

    @property
    def fields(self):
        by_shape = _built_fields.__dict__.setdefault("by_shape", {})
        fields = by_shape.get(type(self))
        if fields is None:
            fields = by_shape[type(self)] = serializers.Serializer.fields.func(type(self)())
        return fields


class RequestIdField(serializers.RegexField):
    def __init__(self, **kwargs):
        super().__init__(
            r"^[A-Za-z0-9._:-]{8,64}$", help_text="Unique per logical request; reuse it on retry.", **kwargs
        )


class ProcessorDeclarationSerializer(serializers.Serializer):
    operation = serializers.CharField(max_length=64)
    processor_contract = serializers.CharField(max_length=255)
    runtime_version = serializers.CharField(max_length=128, required=False, allow_blank=True, default="")
    slots = serializers.IntegerField(min_value=1, max_value=256)


class SessionRegisterSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    instance = serializers.CharField(max_length=128)
    protocol_version = serializers.CharField(max_length=16)
    processors = ProcessorDeclarationSerializer(many=True)


class SessionSerializer(serializers.Serializer):
    session_id = serializers.UUIDField()
    state = serializers.CharField()
    expires_at = serializers.DateTimeField()
    heartbeat_seconds = serializers.FloatField()
    lease_seconds = serializers.IntegerField()


class SessionHeartbeatSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    health = serializers.DictField(child=serializers.BooleanField(), required=False, default=dict)


class RequestOnlySerializer(WorkerRequestSerializer):
    request_id = RequestIdField()


class OfferSerializer(serializers.Serializer):
    operation = serializers.CharField(max_length=64)
    permits = serializers.IntegerField(min_value=1, max_value=256)


class MaxClaimsField(serializers.IntegerField):
    def __init__(self, **kwargs):
        help_text = "Take up to this many claims at once (never more than the permits offered)."
        super().__init__(min_value=1, max_value=256, default=1, help_text=help_text, **kwargs)


class AcquireSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    offers = OfferSerializer(many=True, min_length=1)
    wait_seconds = serializers.FloatField(min_value=0, max_value=20, default=20)
    max_claims = MaxClaimsField()


class TicketSerializer(serializers.Serializer):
    ticket_id = serializers.UUIDField()
    url = serializers.CharField()
    secret = serializers.CharField(help_text="Send as the X-Quire-Transfer-Secret header.")
    expires_at = serializers.DateTimeField()
    max_bytes = serializers.IntegerField()


class ClaimInputSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    schema = serializers.CharField()
    download = TicketSerializer()


class ClaimSerializer(serializers.Serializer):
    job_id = serializers.UUIDField()
    attempt = serializers.IntegerField()
    claim_id = serializers.UUIDField()
    operation = serializers.CharField()
    processor_contract = serializers.CharField()
    lease_expires_at = serializers.DateTimeField()
    limits = serializers.DictField()
    request = serializers.DictField()
    input = ClaimInputSerializer()
    uploads = serializers.DictField(
        child=TicketSerializer(),
        help_text="Role → upload ticket, one per result role of the operation; the PUT names the media type "
        "(`X-Quire-Media-Type`), digest (`X-Quire-Sha256`) and filename (`X-Quire-Filename`, percent-encoded).",
    )


class AcquireResultSerializer(serializers.Serializer):
    claim = ClaimSerializer(allow_null=True, help_text="The first of `claims`, or null when there is none.")
    claims = ClaimSerializer(many=True, help_text="Every claim made, at most `max_claims`, oldest job first.")


class ClaimHeartbeatSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    phase = serializers.ChoiceField(choices=[Phase.PROCESSING, Phase.UPLOADING_RESULT], required=False)


class LeaseSerializer(serializers.Serializer):
    lease_expires_at = serializers.DateTimeField()
    cancellation_requested = serializers.BooleanField()


CANCELLATIONS_WAIT_SECONDS_MAX = 25


class CancellationsSerializer(WorkerRequestSerializer):
    """Read-only and so without a ``request_id``: a retry simply asks again."""

    wait_seconds = serializers.FloatField(
        min_value=0,
        max_value=CANCELLATIONS_WAIT_SECONDS_MAX,
        default=CANCELLATIONS_WAIT_SECONDS_MAX,
        help_text="Hold the answer this long while no claim outside `known_claim_ids` is to be cancelled.",
    )
    known_claim_ids = serializers.ListField(
        child=serializers.UUIDField(),
        max_length=1024,
        required=False,
        default=list,
        help_text="Claims the agent already stops: listed in the answer again, but they do not end the wait.",
    )


class CancellationsResultSerializer(serializers.Serializer):
    claim_ids = serializers.ListField(
        child=serializers.UUIDField(),
        help_text="This session's current claims whose cancellation was requested, oldest claim first.",
    )


class UploadTicketRequestSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    role = serializers.CharField(max_length=32)
    media_type = serializers.CharField(max_length=128)
    filename = serializers.CharField(max_length=255)
    size = serializers.IntegerField(min_value=0)
    sha256 = serializers.RegexField(r"^[0-9a-fA-F]{64}$")


class DiagnosticEntrySerializer(serializers.Serializer):
    file = serializers.CharField(allow_null=True, required=False, max_length=1024)
    line = serializers.IntegerField(allow_null=True, required=False)
    severity = serializers.ChoiceField(choices=["error", "warning", "info"])
    message = serializers.CharField(max_length=2000)


class DiagnosticsSerializer(serializers.Serializer):
    log = serializers.CharField(allow_blank=True, required=False, default="", trim_whitespace=False)
    entries = DiagnosticEntrySerializer(many=True, required=False, default=list, max_length=1000)


class FailureReportSerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    failure_class = serializers.ChoiceField(choices=FailureClass.choices)
    code = serializers.CharField(max_length=64)
    message = serializers.CharField(max_length=4000, allow_blank=True)
    diagnostics = DiagnosticsSerializer(required=False)


class DeliverySerializer(WorkerRequestSerializer):
    request_id = RequestIdField()
    diagnostics = DiagnosticsSerializer(required=False)
    offers = OfferSerializer(
        many=True,
        required=False,
        help_text="Permits to fill again at once, as in an acquire (usually the one this delivery frees).",
    )
    max_claims = MaxClaimsField()


class JobStateSerializer(serializers.Serializer):
    job_id = serializers.UUIDField()
    job_state = serializers.CharField()


class DeliveryResultSerializer(JobStateSerializer):
    claims = ClaimSerializer(many=True, help_text="Claims made for the delivery's `offers`, never waited for.")


class StagedSerializer(serializers.Serializer):
    role = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField()
