from rest_framework import serializers


class InspectionOutputSerializer(serializers.Serializer):
    page_count = serializers.IntegerField()
    converter_generation = serializers.IntegerField()
    source_sha256 = serializers.CharField()
    cache_hit = serializers.BooleanField()
