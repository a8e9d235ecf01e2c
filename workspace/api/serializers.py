from rest_framework import serializers

from workspace.models import Compiler, ProjectType


class ProjectCreateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    type = serializers.ChoiceField(choices=ProjectType.choices)
    entry_path = serializers.CharField(max_length=1024, required=False)
    compiler = serializers.ChoiceField(choices=Compiler.choices, required=False)
    starter = serializers.BooleanField(required=False, default=False, help_text="Seed starter content that compiles.")


class ProjectUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    entry_path = serializers.CharField(max_length=1024, required=False)
    compiler = serializers.ChoiceField(choices=Compiler.choices, required=False)


class ProjectOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    type = serializers.ChoiceField(choices=ProjectType.choices)
    entry_path = serializers.CharField()
    compiler = serializers.SerializerMethodField()
    generation = serializers.IntegerField()
    file_count = serializers.IntegerField()
    total_bytes = serializers.IntegerField()
    created_at = serializers.DateTimeField()

    def get_compiler(self, project) -> str | None:
        return project.compiler or None


class FileOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Stable across renames and moves (it names the live document).")
    path = serializers.CharField()
    kind = serializers.CharField(help_text="`text` (a live UTF-8 document) or `asset` (bytes kept as they are).")
    encoding = serializers.CharField(
        help_text="For a text file that is not UTF-8, kept byte for byte as an asset: its detected encoding "
        '(`cp1252`, `koi8-r`, …); empty otherwise. `PATCH` with `{"encoding": "utf-8"}` converts it.'
    )
    size = serializers.IntegerField(source="size_bytes")
    sha256 = serializers.CharField()
    version = serializers.IntegerField(help_text='Counts content changes; served as `ETag: "<version>"`.')
    updated_at = serializers.DateTimeField()


class TreeEntrySerializer(serializers.Serializer):
    """A file (as ``FileOutputSerializer``) or a folder (``kind: folder``, its other fields null)."""

    id = serializers.IntegerField(allow_null=True)
    path = serializers.CharField()
    kind = serializers.ChoiceField(choices=["text", "asset", "folder"])
    encoding = serializers.CharField(allow_null=True)
    size = serializers.IntegerField(allow_null=True)
    sha256 = serializers.CharField(allow_null=True)
    version = serializers.IntegerField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class FileChangeInputSerializer(serializers.Serializer):
    path = serializers.CharField(max_length=4096, required=False, help_text="The new path (a rename or a move).")
    encoding = serializers.ChoiceField(
        choices=["utf-8"], required=False, help_text="Convert a text file kept in another encoding to UTF-8."
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Send the new `path`, or `encoding: utf-8`.")
        return attrs


class FolderInputSerializer(serializers.Serializer):
    path = serializers.CharField(max_length=4096)


class FolderOutputSerializer(serializers.Serializer):
    path = serializers.CharField()
    files = serializers.IntegerField(help_text="How many files the change moved or deleted.")
    folders = serializers.IntegerField(help_text="How many folders it made, moved or deleted.")
