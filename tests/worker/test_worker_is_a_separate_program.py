"""The worker's sandbox and processors load without Django or any app (import-linter cannot see Django), and the
wire package without anything beyond the standard library."""

import subprocess
import sys
from pathlib import Path

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


def test_the_wire_package_needs_only_the_standard_library():
    """``quire_wire`` loads with no site-packages at all (``-S``): both programs can ship it as it is."""
    wire_root = Path(quire_wire.__file__).resolve().parents[1]
    probe = f"import sys\nsys.path.insert(0, {str(wire_root)!r})\nimport quire_wire, quire_wire.log_lines"

    loaded = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True)

    assert loaded.returncode == 0, loaded.stderr
