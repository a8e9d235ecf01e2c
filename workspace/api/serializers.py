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
    path = serializers.CharField()
    kind = serializers.CharField()
    size = serializers.IntegerField(source="size_bytes")
    sha256 = serializers.CharField()
    version = serializers.IntegerField(help_text='Counts content changes; served as `ETag: "<version>"`.')
    updated_at = serializers.DateTimeField()


class FileMoveInputSerializer(serializers.Serializer):
    path = serializers.CharField(max_length=4096, help_text="The new path.")
