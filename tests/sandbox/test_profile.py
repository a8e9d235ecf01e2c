"""The shared sandbox profile (sandbox/, ``quire_sandbox``) on its own, with the real tools.

The confinement as a whole is tested where it is used: tests/worker/test_sandbox_executors.py and
tests/office/test_sandbox.py.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from quire_sandbox import Bind, Profile, Rlimits, bwrap_options, hand_over, prlimit_options

MiB = 1024 * 1024
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing owners and running bwrap without a user namespace")


@as_root
def test_handing_over_a_tree_never_follows_a_planted_link(tmp_path):
    outside = tmp_path / "host-file"
    outside.write_text("the host's")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "link").symlink_to(outside)

    hand_over(tree, 1_000_003_000, 1_000_003_000)

    assert outside.stat().st_uid == 0
    assert (tree / "sub" / "link").lstat().st_uid == (tree / "sub").stat().st_uid == 1_000_003_000


def test_the_limits_hold_for_the_command_and_an_absent_process_bound_is_left_alone():
    limits = Rlimits(address_space_bytes=512 * MiB, cpu_seconds=30, cpu_hard_seconds=32, file_bytes=MiB, open_files=64)

    shown = subprocess.run(
        [_program("prlimit"), *prlimit_options(limits), "cat", "/proc/self/limits"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert re.search(r"Max cpu time\s+30\s+32 ", shown)
    assert re.search(rf"Max address space\s+{512 * MiB}\s+{512 * MiB} ", shown)
    assert re.search(r"Max open files\s+64\s+64 ", shown)
    with open("/proc/self/limits") as own:
        assert re.search(r"Max processes.*", shown)[0] == re.search(r"Max processes.*", own.read())[0]


@as_root
def test_a_bind_elsewhere_shows_the_file_there_and_nothing_of_where_it_lies(tmp_path):
    secret = tmp_path / "bridge.py"
    secret.write_text("print('bridged')\n")
    inside = Path("/opt/quire-test/bridge.py")
    profile = Profile(("/usr",), tmp_bytes=MiB, cwd=Path("/"), binds=(Bind(secret, inside=inside),))
    script = f"cat {inside} && ! test -e {tmp_path} && ! touch {inside} 2>/dev/null"

    run = subprocess.run(
        [_program("bwrap"), *bwrap_options(profile), "/bin/sh", "-c", script], capture_output=True, text=True
    )

    assert run.returncode == 0, run.stderr
    assert run.stdout == "print('bridged')\n"


def _program(name: str) -> str:
    program = shutil.which(name)
    if program is None:
        pytest.skip(f"{name} is not installed")
    return program
