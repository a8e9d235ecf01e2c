import signal
import threading
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from office import runtime, services
from office.host_service import HostService


class Command(BaseCommand):
    help = (
        "Serve this machine's one Office host (queue, cache, limits, warm converters) to its server processes "
        "on a Unix socket (OFFICE_HOST_SOCKET, by default var/office.sock), which they use unless OFFICE_HOST=process."
    )

    def add_arguments(self, parser):
        parser.add_argument("--socket", default=settings.OFFICE_HOST_SOCKET, help="The socket's path.")

    def handle(self, *args, socket: str, **options):
        if not socket:
            raise CommandError("Say where to listen: --socket PATH (or OFFICE_HOST_SOCKET).")
        host = runtime.host_runtime(services.runtime_from_settings)  # this process's own: it is the shared one
        service = HostService(host, services.source_reader, services.prewarm_finished)
        service.start(Path(socket))
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        self.stdout.write(f"office host serving on {socket} ({settings.OFFICE_SLOTS} converter slots)")
        self.stdout.flush()
        while not stop.wait(1):
            pass
        service.stop()
        host.close()
