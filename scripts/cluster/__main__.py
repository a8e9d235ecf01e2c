"""``make cluster``: the cluster of docs/deployment.md on this machine, in network namespaces, until Ctrl-C."""

import signal
import sys
import time

from foundation.env import VAR_DIR
from scripts.cluster.topology import DEMO_PASSWORD, DEMO_USER, Cluster


def main() -> int:
    cluster = Cluster(VAR_DIR / "cluster")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        cluster.start()
        print(
            f"\nQuire's cluster is up: {cluster.url} (TLS by the cluster's own CA: {cluster.ca_file}),"
            f" also http://{cluster.url.removeprefix('https://')}\n"
            f"Sign in as {DEMO_USER} / {DEMO_PASSWORD}. Logs: {cluster.root / 'logs'}. Ctrl-C stops everything.",
            flush=True,
        )
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        return 0
    finally:
        print("stopping the cluster…", flush=True)
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
