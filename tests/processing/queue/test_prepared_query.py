"""A QuerySet compiled once per shape runs, prepared, with each call's values: the same rows as the ORM's."""

import uuid

import pytest
from django.conf import settings
from django.db import connection

from processing.models import JobState, ProcessingJob
from processing.queue.prepared_query import PreparedQuery
from tests.factories import ProjectFactory
from tests.processing.conftest import submit_build

pytestmark = pytest.mark.django_db


def _jobs_of(limit, *, requester_id, states, exclude):
    return (
        ProcessingJob.objects.filter(requester_id=requester_id, state__in=states, operation__startswith="latex.")
        .exclude(id__in=exclude)
        .order_by("created_at")
        .values_list("id", "state")[:limit]
    )


JOBS_OF = PreparedQuery(_jobs_of)


@pytest.fixture
def three_jobs(api_client_for, owner, configure_deployment):
    configure_deployment()
    client, project = api_client_for(owner), ProjectFactory(owner=owner, starter=True)
    return [submit_build(client, project, key=f"job-{n}").json()["id"] for n in range(3)]


def test_its_rows_are_the_orms_for_each_calls_values(owner, three_jobs):
    first, second, third = (uuid.UUID(job_id) for job_id in three_jobs)
    cases = [
        (["queued"], [], [first, second]),
        (["queued", "running"], [first], [second, third]),
        (["running"], [], []),
    ]
    for states, exclude, expected in cases:
        values = {"requester_id": owner.pk, "states": states, "exclude": exclude}

        prepared = JOBS_OF.rows(literals=(2,), **values)

        assert prepared == list(_jobs_of(2, **values))
        assert [job_id for job_id, _ in prepared] == expected


def test_it_compiles_once_per_shape_and_inlines_the_querys_own_constants(owner, three_jobs):
    query = PreparedQuery(_jobs_of)
    for requester_id in (owner.pk, owner.pk + 1):
        query.rows(literals=(1,), requester_id=requester_id, states=["queued"], exclude=[])
    query.rows(literals=(1,), requester_id=owner.pk, states=["queued", "running"], exclude=[])

    assert len(query._compiled) == 2, "one compilation per list length, not per value"
    sql, slots = next(iter(query._compiled.values()))
    assert [slot.name for slot in slots] == ["requester_id", "states"], "no slot for an empty exclusion"
    assert "LIKE 'latex.%%'" in sql, "the query's constant is a literal, its % escaped for the driver"


def test_a_value_the_query_does_not_use_as_given_is_refused(owner):
    def dropping_exclude(limit, *, requester_id, exclude):
        return ProcessingJob.objects.filter(requester_id=requester_id).values_list("id")[:limit]

    with pytest.raises(ValueError, match="exclude"):
        PreparedQuery(dropping_exclude).rows(literals=(1,), requester_id=owner.pk, exclude=[uuid.uuid4()])


@pytest.mark.skipif(
    settings.TRANSACTION_POOLED,
    reason="behind a pooler it is prepared on a lent connection: test_claims_prepare_behind_a_pooler.py",
)
def test_its_statement_is_prepared_on_the_connection(owner, three_jobs):
    JOBS_OF.rows(literals=(3,), requester_id=owner.pk, states=[JobState.QUEUED], exclude=[])

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s", ["%LIKE 'latex.%"])
        assert cursor.fetchall(), "prepared on the server"
