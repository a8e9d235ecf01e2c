"""Operators as the two roles make them: staff users in the read-only or the acting group."""

from django.contrib.auth.models import Group

from operators import facade as operators
from tests.factories import UserFactory


def operator_user(*, acting: bool, username: str | None = None):
    user = UserFactory(is_staff=True, **({"username": username} if username else {}))
    user.groups.add(Group.objects.get(name=operators.ACTING_GROUP if acting else operators.READ_ONLY_GROUP))
    return type(user).objects.get(pk=user.pk)  # fresh: permission caches start empty
