"""The library's models moved from Workspace by state-only migrations: the migrated database still has the
tables they name, with a column for every field, and Workspace no longer claims them."""

import pytest
from django.apps import apps
from django.db import connection

from library.models import LibraryDocument, LibraryPage, LibraryVersion

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("model", [LibraryDocument, LibraryVersion, LibraryPage])
def test_each_model_reads_the_table_workspace_created(model):
    with connection.cursor() as cursor:
        columns = {
            column.name for column in connection.introspection.get_table_description(cursor, model._meta.db_table)
        }

    assert model._meta.db_table == f"workspace_{model.__name__.lower()}"
    assert {field.column for field in model._meta.concrete_fields} <= columns


def test_workspace_holds_projects_and_files_only():
    assert not [
        model.__name__ for model in apps.get_app_config("workspace").get_models() if "Library" in model.__name__
    ]
