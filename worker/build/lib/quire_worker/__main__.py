import sys

from quire_worker.main import run

sys.exit(run())
