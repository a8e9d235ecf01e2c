from django.core.management.base import BaseCommand

from processing.relay.consumer import events, subscriber_from_url


class Command(BaseCommand):
    help = "Print outbox events as the broker delivers them (marking redeliveries as duplicates)."

    def add_arguments(self, parser):
        parser.add_argument("--broker-url", default=None, help="Defaults to OUTBOX_BROKER_URL.")
        parser.add_argument("--queue", default="", help="AMQP: consume this queue instead of a private one.")
        parser.add_argument("--count", type=int, default=0, help="Stop after this many events.")
        parser.add_argument("--timeout", type=float, default=None, help="Stop after this many idle seconds.")

    def handle(self, *args, broker_url, queue: str, count: int, timeout: float | None, **options):
        subscriber = subscriber_from_url(broker_url, queue=queue)
        try:
            for seen, event in enumerate(events(subscriber, timeout=timeout), start=1):
                self.stdout.write(event.line())
                self.stdout.flush()
                if count and seen >= count:
                    break
        except KeyboardInterrupt:
            pass
        finally:
            subscriber.close()
