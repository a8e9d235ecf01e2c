from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from processing.models import JobState, Phase
from processing.queue.cancellation import job_is_cancellable


class ArtifactSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    role = serializers.CharField()
    media_type = serializers.CharField()
    filename = serializers.CharField()
    size = serializers.IntegerField(source="size_bytes")
    sha256 = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, artifact) -> str:
        return f"/v1/processing/jobs/{artifact.job_id}/artifacts/{artifact.pk}"


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "properties": {
            "class": {"type": "string"},
            "code": {"type": "string"},
            "message": {"type": "string"},
        },
        "required": ["class", "code", "message"],
    }
)
class FailureField(serializers.Field):
    def to_representation(self, job):
        if not job.failure_class:
            return None
        return {"class": job.failure_class, "code": job.failure_code, "message": job.failure_message}


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "description": "What a project build or export captured: the project's generation and each text "
        "document's version (the file's ETag) as it was frozen.",
        "properties": {
            "generation": {"type": "integer"},
            "documents": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "version": {"type": "integer"}},
                    "required": ["path", "version"],
                },
            },
        },
        "required": ["generation", "documents"],
    }
)
class CapturedField(serializers.Field):
    def to_representation(self, captured):
        if not captured:
            return None
        documents = [{"path": path, "version": version} for path, version in captured.get("documents", [])]
        return {"generation": captured["generation"], "documents": documents}


class JobSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    operation = serializers.CharField()
    state = serializers.ChoiceField(choices=JobState.choices)
    phase = serializers.ChoiceField(choices=Phase.choices)
    project_id = serializers.UUIDField(allow_null=True)
    requester = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    queued_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    attempt_count = serializers.IntegerField()
    cancellation_requested = serializers.BooleanField()
    cancellable = serializers.SerializerMethodField()
    cache_hit = serializers.BooleanField()
    failure = FailureField(source="*")
    artifacts = ArtifactSerializer(many=True, source="shown_artifacts")
    result_project_id = serializers.UUIDField(allow_null=True)
    input_profile = serializers.CharField(allow_blank=True)
    processor_contract = serializers.CharField(allow_blank=True)
    retry_of_id = serializers.UUIDField(allow_null=True)
    captured = CapturedField()
    superseded = serializers.SerializerMethodField(
        help_text="Cancelled because a newer build of the project by the same requester replaced it in the queue."
    )
    start = serializers.SerializerMethodField(
        help_text="How a succeeded LaTeX build started: warm (from the previous build's auxiliary files), clean, "
        "or fallback (a warm start built again from scratch); null for other jobs."
    )

    def get_superseded(self, job) -> bool:
        return job.state == JobState.CANCELLED and job.failure_code == "superseded"

    def get_start(self, job) -> str | None:
        return job.build_start or None

    def get_requester(self, job) -> str:
        return self.context.get("usernames", {}).get(job.requester_id, "")

    def get_cancellable(self, job) -> bool:
        return job_is_cancellable(job)


class JobPageSerializer(serializers.Serializer):
    jobs = JobSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class CapabilitySerializer(serializers.Serializer):
    operation = serializers.CharField()
    state = serializers.ChoiceField(choices=["available", "waiting"])
    project_types = serializers.ListField(child=serializers.CharField())
    input_profiles = serializers.DictField(child=serializers.CharField(), required=False)

    def to_representation(self, capability):
        data = super().to_representation(capability)
        if capability.input_profiles is None:
            data.pop("input_profiles", None)
        return data


class CapabilitiesSerializer(serializers.Serializer):
    capabilities = CapabilitySerializer(many=True)


class BuildInputSerializer(serializers.Serializer):
    compiler = serializers.ChoiceField(
        choices=["pdflatex", "xelatex", "lualatex"],
        required=False,
        help_text="Override the project's compiler for this build.",
    )
    version = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Build this version of the project's history (a label's) instead of its current files; "
        "such a build is the job's own, never the project's PDF.",
    )


class DiagnosticsSerializer(serializers.Serializer):
    log = serializers.CharField()
    entries = serializers.ListField(child=serializers.DictField())
