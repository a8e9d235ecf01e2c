from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from processing.facade import JobSerializer


class LibraryVersionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    number = serializers.IntegerField(help_text="The document revision this version's acceptance produced.")
    sha256 = serializers.CharField()
    size = serializers.IntegerField(source="size_bytes")
    page_count = serializers.IntegerField()
    filename = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    job_id = serializers.UUIDField(source="index_job_id")
    job_state = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField(help_text="searchable | indexing | failed | superseded")

    def get_job_state(self, version) -> str:
        return self.context["view_of"].job_states.get(version.index_job_id, "")

    def get_status(self, version) -> str:
        return self.context["view_of"].version_status(version)


class LibraryDocumentSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="document.id")
    project_id = serializers.UUIDField(source="document.project_id")
    title = serializers.CharField(source="document.title")
    revision = serializers.IntegerField(source="document.revision")
    requested_version_id = serializers.UUIDField(source="document.requested_version_id", allow_null=True)
    searchable_version_id = serializers.UUIDField(source="document.searchable_version_id", allow_null=True)
    created_at = serializers.DateTimeField(source="document.created_at")
    updated_at = serializers.DateTimeField(source="document.updated_at")
    versions = serializers.SerializerMethodField()

    @extend_schema_field(LibraryVersionSerializer(many=True))
    def get_versions(self, view) -> list[dict]:
        return LibraryVersionSerializer(view.document.versions, many=True, context={"view_of": view}).data


class LibraryDocumentListSerializer(serializers.Serializer):
    documents = LibraryDocumentSerializer(many=True)


class LibraryAcceptedSerializer(serializers.Serializer):
    document = LibraryDocumentSerializer()
    version = LibraryVersionSerializer()
    job = JobSerializer()


class LibrarySearchHitSerializer(serializers.Serializer):
    document_id = serializers.UUIDField()
    title = serializers.CharField()
    version_id = serializers.UUIDField()
    version_number = serializers.IntegerField()
    page = serializers.IntegerField(source="page_number")
    rank = serializers.FloatField()
    snippet = serializers.CharField(help_text="Plain text around the matches.")
    snippet_html = serializers.CharField(help_text="The snippet, HTML-escaped, with matches in <mark>.")


class LibrarySearchResultSerializer(serializers.Serializer):
    query = serializers.CharField()
    hits = LibrarySearchHitSerializer(many=True)
