"""Running test steps at the same moment on real, separate database connections."""

import threading

from django.db import connection


def run_together(*targets) -> list[BaseException]:
    """Start every target behind one barrier, each on its own thread (and connection); return their errors."""
    start = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def run(target):
        try:
            start.wait()
            target()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
