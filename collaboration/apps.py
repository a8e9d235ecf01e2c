from django.apps import AppConfig


class CollaborationConfig(AppConfig):
    name = "collaboration"
