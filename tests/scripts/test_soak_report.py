"""The soak's verdict: clean only with real load, every user alive, the system drained and the checker clean."""

import subprocess

import pytest

from scripts import soak

pytestmark = pytest.mark.django_db

CLEAN_CHECK = subprocess.CompletedProcess(args=[], returncode=0, stdout="no violations", stderr="")


def tally_of(jobs: int, deaths: int = 0) -> soak.Tally:
    tally = soak.Tally()
    tally.jobs = {f"00000000-0000-0000-0000-{n:012d}" for n in range(jobs)}
    tally.deaths = [f"Traceback: user {n} died" for n in range(deaths)]
    return tally


def loaded_fully() -> int:
    return int(soak.ECHO_PER_S * soak.MINUTES * 60)


def test_a_loaded_drained_soak_with_a_clean_check_passes():
    assert soak._report(tally_of(loaded_fully()), [], True, CLEAN_CHECK)


def test_a_soak_whose_user_died_fails_and_says_how(capsys):
    assert not soak._report(tally_of(loaded_fully(), deaths=1), [], True, CLEAN_CHECK)
    assert "user 0 died" in capsys.readouterr().out


def test_a_soak_that_accepted_far_fewer_jobs_than_its_rate_implies_fails():
    assert not soak._report(tally_of(loaded_fully() // 3), [], True, CLEAN_CHECK)


def test_a_soak_that_did_not_drain_or_whose_check_found_violations_fails():
    assert not soak._report(tally_of(loaded_fully()), [], False, CLEAN_CHECK)
    violations = subprocess.CompletedProcess(args=[], returncode=1, stdout="1 violation", stderr="")
    assert not soak._report(tally_of(loaded_fully()), [], True, violations)
