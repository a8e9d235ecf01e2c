"""The maintenance sweep runs every chore a context registered (foundation/chores.py), after Processing's own
reapers, reporting each count under the chore's name; a chore that raises is named and the others still run."""

import pytest

from foundation import chores
from processing.upkeep.reapers import sweep
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db(databases=SWEEP_DATABASES)


def test_a_registered_chore_runs_in_the_sweep_and_its_counts_carry_its_name(monkeypatch):
    monkeypatch.setitem(chores._chores, "tidying", lambda: {"things_tidied": 3})

    report = sweep()

    assert report.counts["tidying_things_tidied"] == 3
    assert "leases_lost" in report.counts and "documents_compacted" in report.counts


def test_a_failing_chore_is_named_and_the_chores_after_it_still_run(monkeypatch):
    def broken():
        raise RuntimeError("a chore that cannot run")

    monkeypatch.setitem(chores._chores, "a_broken_chore", broken)  # by name, it runs first

    report = sweep()

    assert report.failed == ["a_broken_chore"]
    assert "documents_compacted" in report.counts and "workspace_histories_folded" in report.counts
