"""Factories shared by every app's tests. Deterministic defaults; a test overrides what it depends on."""

import factory
from django.contrib.auth import get_user_model

from access.services import token_create
from workspace import services as workspace_services


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "password123")

    @factory.post_generation
    def persist_password(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class ProjectFactory(factory.Factory):
    """Creates projects through the Workspace service, so grants and counters are real."""

    class Meta:
        model = dict

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Project {n}")
    project_type = "latex"
    starter = False

    @classmethod
    def _create(cls, model_class, owner, name, project_type, starter, **kwargs):
        return workspace_services.project_create(
            actor_id=owner.pk, name=name, project_type=project_type, starter=starter, **kwargs
        )

    _build = _create


def bearer_token_for(user) -> str:
    _, plaintext = token_create(user_id=user.pk, name="test")
    return plaintext
