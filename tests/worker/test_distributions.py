"""Core and the worker agent are two distributions sharing two more of ours, the protocol's vocabulary (wire/)
and the sandbox profile (sandbox/): in one environment no file belongs to two of them, and removing either
program leaves the other, and what it shares, whole.

The wheels are built from copies of the four directories (pip builds in the tree it is given) with pip's local
package sources only, and installed with ``--no-index --no-deps`` into a plain virtual environment: nothing is
fetched from the network, and the third-party dependencies stay out, so what is checked is only what Quire
itself ships.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CORE, WORKER = "quire", "quire-worker"
SHARED = ("quire-wire", "quire-sandbox")
# Modules of each program that need nothing but the standard library and the shared distributions.
CORE_PROBES = ("foundation.text_rules", "office.sandbox")  # quire_wire's text rules; quire_sandbox's profile
WORKER_PROBES = ("quire_worker.contracts", "quire_worker.sandbox")
SHARED_PACKAGES = ("quire_wire", "quire_sandbox")
IGNORED = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")

OWNERS = """
import importlib.metadata, json
owners = {}
for dist in importlib.metadata.distributions():
    for file in dist.files or ():
        owners.setdefault(str(file.locate().resolve()), []).append(dist.metadata["Name"])
print(json.dumps(owners))
"""


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory) -> Path:
    """Wheels of Core, the worker, quire-wire and quire-sandbox, built offline."""
    sources = tmp_path_factory.mktemp("sources")
    core = sources / "core"
    core.mkdir()
    shutil.copy(ROOT / "pyproject.toml", core)
    for pattern in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"][
        "include"
    ]:
        shutil.copytree(ROOT / pattern.rstrip("*"), core / pattern.rstrip("*"), ignore=IGNORED)
    directories = [
        core,
        *(shutil.copytree(ROOT / name, sources / name, ignore=IGNORED) for name in ("wire", "sandbox", "worker")),
    ]
    wheels = tmp_path_factory.mktemp("wheels")
    _pip("wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), *map(str, directories), env=_local_sources())
    return wheels


def test_no_file_of_the_environment_belongs_to_two_distributions(wheelhouse, tmp_path):
    python = _environment_with_all(wheelhouse, tmp_path)

    owners = json.loads(_run(python, OWNERS, cwd=tmp_path).stdout)

    assert {path: names for path, names in owners.items() if len(names) > 1} == {}
    for package, distribution in zip(SHARED_PACKAGES, SHARED, strict=True):
        assert {tuple(names) for path, names in owners.items() if f"/{package}/" in path} == {(distribution,)}


def test_removing_the_worker_leaves_core_and_what_it_shares(wheelhouse, tmp_path):
    python = _environment_with_all(wheelhouse, tmp_path)

    _pip("uninstall", "--quiet", "--yes", WORKER, python=python)

    assert _imports(python, *CORE_PROBES, *SHARED_PACKAGES, cwd=tmp_path).returncode == 0
    assert _imports(python, "quire_worker", cwd=tmp_path).returncode != 0


def test_removing_core_leaves_the_worker_and_what_it_shares(wheelhouse, tmp_path):
    python = _environment_with_all(wheelhouse, tmp_path)

    _pip("uninstall", "--quiet", "--yes", CORE, python=python)

    assert _imports(python, *WORKER_PROBES, *SHARED_PACKAGES, cwd=tmp_path).returncode == 0
    assert _imports(python, "office", cwd=tmp_path).returncode != 0


def _environment_with_all(wheelhouse: Path, tmp_path: Path) -> Path:
    """A plain virtual environment (no system site-packages) with the four distributions installed."""
    venv = tmp_path / "venv"
    # No pip inside: this test's own pip installs and removes, through --python, which is quicker than ensurepip.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheels = sorted(str(wheel) for wheel in wheelhouse.glob("*.whl"))
    assert len(wheels) == 4, wheels
    _pip("install", "--quiet", "--no-index", "--no-deps", *wheels, python=python)
    return python


def _imports(python: Path, *modules: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-c", f"import {', '.join(modules)}"], cwd=cwd, capture_output=True)


def _run(python: Path, script: str, *, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-c", script], cwd=cwd, capture_output=True, text=True, check=True)


def _pip(*arguments: str, python: Path | None = None, env: dict[str, str] | None = None) -> None:
    target = ["--python", str(python)] if python else []
    subprocess.run(
        [sys.executable, "-m", "pip", *target, *arguments],
        check=True,
        timeout=600,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **(env or {})},
    )


def _local_sources() -> dict[str, str]:
    """pip's environment with only the local package sources of its configuration (``file://`` indexes and
    find-links directories), so a wheel's build backend comes from this machine; skips when there is none.

    Building needs setuptools in an isolated environment, and a plain ``pip wheel`` may ask PyPI for it.
    """
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    configured: dict[str, list[str]] = {}
    for line in listed.stdout.splitlines():
        key, _, value = line.partition("=")
        option = key.rsplit(".", 1)[-1]
        configured.setdefault(option, []).extend(shlex.split(value.strip().strip("'\"")))
    indexes = [url for option in ("index-url", "extra-index-url") for url in configured.get(option, [])]
    local_indexes = [url for url in indexes if url.startswith("file://")]
    local_links = [link for link in configured.get("find-links", []) if Path(link.removeprefix("file://")).is_dir()]
    if not local_indexes and not local_links:
        pytest.skip("pip's configuration names no local package source to build the wheels from offline")
    env = {"PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": " ".join(local_links)}
    if local_indexes:
        env |= {"PIP_INDEX_URL": local_indexes[0], "PIP_EXTRA_INDEX_URL": " ".join(local_indexes[1:])}
    else:
        env["PIP_NO_INDEX"] = "1"
    return env
