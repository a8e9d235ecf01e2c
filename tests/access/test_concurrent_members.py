"""Adding the same member from two connections at once ends with one grant and no error."""

import pytest

from access.models import ProjectGrant
from access.services import member_set
from tests.concurrency import run_together
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_owners_adding_the_same_new_member_at_once_both_succeed_with_one_grant():
    owner = UserFactory()
    project = ProjectFactory(owner=owner, starter=True)
    for _ in range(10):
        newcomer = UserFactory()

        def add(role: str, newcomer=newcomer):
            return lambda: member_set(actor_id=owner.pk, project_id=project.pk, username=newcomer.username, role=role)

        assert run_together(add("viewer"), add("editor")) == []
        assert ProjectGrant.objects.filter(project_id=project.pk, user=newcomer).count() == 1
