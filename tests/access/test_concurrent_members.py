"""Adding the same member from two connections at once ends with one grant and no error."""

import threading

import pytest
from django.db import connection

from access.models import ProjectGrant
from access.services import member_set
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_owners_adding_the_same_new_member_at_once_both_succeed_with_one_grant():
    owner = UserFactory()
    project = ProjectFactory(owner=owner, starter=True)
    errors: list[BaseException] = []
    for _ in range(10):
        newcomer = UserFactory()
        start = threading.Barrier(2)

        def add(role: str, newcomer=newcomer, start=start):
            try:
                start.wait()
                member_set(actor_id=owner.pk, project_id=project.pk, username=newcomer.username, role=role)
            except BaseException as exc:  # surfaced below
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=add, args=(role,)) for role in ("viewer", "editor")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert ProjectGrant.objects.filter(project_id=project.pk, user=newcomer).count() == 1
