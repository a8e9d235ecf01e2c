"""The worker's sandbox and processors load without Django or any app (import-linter cannot see Django)."""

import subprocess
import sys

WORKER_MODULES = ("processing.worker.sandbox", "processing.worker.processors.latex")
NOT_IN_THE_WORKER = ("django", "rest_framework", "access", "workspace", "collaboration", "office", "config")


def test_importing_the_worker_pieces_loads_no_django_and_no_app():
    probe = (
        f"import sys\nfor name in {WORKER_MODULES!r}: __import__(name)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({NOT_IN_THE_WORKER!r})))"
    )

    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert loaded.stdout.strip() == "[]"
