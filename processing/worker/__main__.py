import sys

from processing.worker.main import run

sys.exit(run())
