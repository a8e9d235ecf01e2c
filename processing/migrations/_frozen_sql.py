"""Frozen SQL: the statements a migration ran, kept in ``sql/`` as the migration first ran them.

A migration that installs database functions loads its statements from files here (as procrastinate's
``RunProcrastinateSQL`` does), never from the code that calls the functions: that code's ``.sql`` files
hold the *current* definitions (``processing/queue/sql/``, ``processing/protocol/sql/``) and may change
in a later migration, while a migration's statements must stay what they were. A test compares the
migrated database's definitions with the current files (tests/processing/migrations).
"""

from pathlib import Path

from django.db import migrations

SQL_DIR = Path(__file__).with_name("sql")


def frozen(name: str) -> str:
    return (SQL_DIR / name).read_text()


def run_frozen_sql(forward: str | tuple[str, ...], reverse: str | tuple[str, ...]) -> migrations.RunSQL:
    """RunSQL of the named files, forward and reverse: each side the files' statements in order, as one script
    (which RunSQL splits into statements, as it did the migration's inline strings)."""

    def script(names):
        return "\n".join(frozen(name) for name in ((names,) if isinstance(names, str) else names))

    return migrations.RunSQL(script(forward), script(reverse))
