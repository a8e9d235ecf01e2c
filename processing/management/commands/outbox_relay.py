import signal
import threading

from django.core.management.base import BaseCommand

from processing.relay.brokers import broker_from_url
from processing.relay.relay import OutboxRelay


class Command(BaseCommand):
    help = "Publish committed outbox events to OUTBOX_BROKER_URL (NOTIFY by default); safe to run several."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--idle", type=float, default=1.0, help="Seconds to wait when nothing is due.")
        parser.add_argument("--metrics-port", type=int, default=0, help="Serve this relay's counters here.")

    def handle(self, *args, once: bool, idle: float, metrics_port: int, **options):
        relay = OutboxRelay(broker_from_url())
        if once:
            result = relay.run_once()
            relay.broker.close()
            self.stdout.write(f"claimed={result.claimed} published={result.published} failed={result.failed}")
            return
        if metrics_port:
            from prometheus_client import start_http_server

            start_http_server(metrics_port, addr="127.0.0.1")
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        self.stdout.write(f"outbox relay publishing to {relay.broker.name}", ending="\n")
        self.stdout.flush()
        relay.run(stop=stop, idle_seconds=idle)
