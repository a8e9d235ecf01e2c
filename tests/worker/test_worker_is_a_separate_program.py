"""The worker's sandbox and processors load without Django or any app (import-linter cannot see Django), and the
wire package and the sandbox profile without anything beyond the standard library."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import quire_sandbox
import quire_wire

WORKER_MODULES = ("quire_worker.main", "quire_worker.sandbox", "quire_worker.processors.latex.compile_pdf")
NOT_IN_THE_WORKER = (
    "django",
    "rest_framework",
    "access",
    "workspace",
    "collaboration",
    "processing",
    "office",
    "config",
)


def test_importing_the_worker_pieces_loads_no_django_and_no_app():
    probe = (
        f"import sys\nfor name in {WORKER_MODULES!r}: __import__(name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({NOT_IN_THE_WORKER!r})))"
    )

    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert loaded.stdout.strip() == "[]"


@pytest.mark.parametrize("package", [quire_wire, quire_sandbox], ids=lambda package: package.__name__)
def test_the_shared_packages_need_only_the_standard_library(package):
    """Each loads with no site-packages at all (``-S``): Core and the worker can both depend on it as it is."""
    source_root = Path(package.__file__).resolve().parents[1]
    modules = ", ".join(module.name for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."))
    probe = f"import sys\nsys.path.insert(0, {str(source_root)!r})\nimport {package.__name__}, {modules}"

    loaded = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True)

    assert loaded.returncode == 0, loaded.stderr
