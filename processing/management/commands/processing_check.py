from datetime import timedelta

from django.core.management.base import BaseCommand

from processing.upkeep.invariants import check_all


class Command(BaseCommand):
    help = "Check document processing's promises against the database; exit 1 and list each violation."

    def add_arguments(self, parser):
        parser.add_argument("--slack", type=float, default=60.0, help="Seconds of lateness to tolerate.")
        parser.add_argument("--skip-outbox", action="store_true", help="Do not check the outbox (no relay running).")

    def handle(self, *args, slack: float, skip_outbox: bool, **options):
        violations = check_all(slack=timedelta(seconds=slack), include_outbox=not skip_outbox)
        for violation in violations:
            self.stdout.write(str(violation))
        if violations:
            self.stderr.write(f"{len(violations)} violation(s)")
            raise SystemExit(1)
        self.stdout.write("processing_check: all promises hold")
