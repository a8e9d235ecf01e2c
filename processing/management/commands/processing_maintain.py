import time

from django.core.management.base import BaseCommand
from django.db import close_old_connections

from processing.upkeep.reapers import sweep


class Command(BaseCommand):
    help = "Run the processing reapers: once with --once, otherwise every --interval seconds."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true")
        parser.add_argument("--interval", type=float, default=5.0)

    def handle(self, *args, once: bool, interval: float, **options):
        while True:
            close_old_connections()
            try:
                report = sweep()
            except Exception as exc:  # the database may be restarting; keep the loop alive
                self.stderr.write(f"sweep failed: {exc}")
                report = None
            if report and any(report.counts.values()):
                self.stdout.write(" ".join(f"{k}={v}" for k, v in report.counts.items() if v))
            if report and report.failed:
                self.stderr.write(f"steps failed (see the log): {', '.join(report.failed)}")
            if once:
                return
            time.sleep(interval)
