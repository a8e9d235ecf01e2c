"""The migrated database's functions and triggers are those their callers' ``.sql`` files define, and no others.

Each function that stays in the database has its current definition in a ``.sql`` file beside the Python that
calls it; migrations install frozen copies. Running a current file over the migrated database must change
nothing (``pg_get_functiondef`` and ``pg_get_triggerdef`` read the same before and after), and every
``processing_…`` function in the database must be one that a current file defines: a file edited without a
migration, or a migration without its file, fails here.
"""

import re
from pathlib import Path

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
CURRENT_FILES = [
    ROOT / "processing/queue/sql/advisory_key.sql",
    ROOT / "processing/queue/sql/deliver.sql",
    ROOT / "processing/queue/sql/fair_share.sql",
    ROOT / "processing/queue/sql/job_ended_notify.sql",
    ROOT / "processing/protocol/sql/replay.sql",
]
DEFINED = re.compile(r"^CREATE OR REPLACE FUNCTION (\w+)\(", re.MULTILINE)

_DEFINITIONS = """
    SELECT 'function ' || p.oid::regprocedure::text, pg_get_functiondef(p.oid)
    FROM pg_proc AS p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'processing\\_%%'
    UNION ALL
    SELECT 'trigger ' || t.tgname, pg_get_triggerdef(t.oid)
    FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
    WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace AND c.relname LIKE 'processing\\_%%'
"""


def definitions() -> dict[str, str]:
    with connection.cursor() as cursor:
        cursor.execute(_DEFINITIONS)
        return dict(cursor.fetchall())


def test_running_the_current_files_over_the_migrated_database_changes_no_definition():
    migrated = definitions()

    with connection.cursor() as cursor:  # rolled back with the test's transaction
        for path in CURRENT_FILES:
            cursor.execute(path.read_text())

    assert definitions() == migrated


def test_every_processing_function_in_the_database_has_a_current_file():
    defined = {name for path in CURRENT_FILES for name in DEFINED.findall(path.read_text())}

    in_database = {name.split()[1].split("(")[0] for name in definitions() if name.startswith("function ")}

    assert in_database == defined

