"""An agent reaches Core over HTTPS through HAProxy (Debian's), verifying the proxy's certificate against the
CA it is given, as on a host of its own (docs/deployment.md): the CA and certificate are issued as the
cluster's topology script issues them."""

import shutil
import socket
import ssl
import subprocess
import time
from urllib.parse import urlsplit

import pytest

from processing.models import ProcessingJob
from processing.submission.submit import job_submit
from quire_worker.client import HttpCoreClient
from scripts.cluster.certificates import certificates_issue
from scripts.cluster.haproxy import haproxy_config
from tests.factories import ProjectFactory
from tests.live_server import free_port
from tests.processing.e2e.agents import running_agent, token_file
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("haproxy"), reason="HAProxy is missing: scripts/system_packages.sh test"),
]
ECHO = "test.echo/v1"


@pytest.fixture
def tls_proxy(protocol_server, tmp_path):
    """HAProxy on loopback terminating TLS in front of the test's Core server; yields (https URL, CA file)."""
    ca, bundle = certificates_issue(tmp_path / "certs", proxy_address="127.0.0.1", proxy_name="localhost")
    core = urlsplit(protocol_server.url)
    tls_port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        haproxy_config(
            address="127.0.0.1",
            bundle=bundle,
            replicas={"core": core.hostname},
            port=core.port,
            tls_port=tls_port,
            plain_port=free_port(),
        )
    )
    with open(tmp_path / "haproxy.log", "ab") as log:
        proxy = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _accepts(tls_port) or proxy.poll() is not None, what="HAProxy to listen")
        assert proxy.poll() is None, (tmp_path / "haproxy.log").read_text()
        yield f"https://127.0.0.1:{tls_port}", ca
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def test_an_agent_given_the_ca_runs_a_job_through_the_tls_proxy(owner, protocol_server, tls_proxy):
    url, ca = tls_proxy
    project = ProjectFactory(owner=owner, starter=True)
    job_id = job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="tls", project_id=project.pk).job_id

    with running_agent(url, protocol_server.root, "--ca-file", str(ca), name="tls-agent"):
        wait_until(lambda: ProcessingJob.objects.get(pk=job_id).state == "succeeded", what="the job over HTTPS")


def test_a_proxy_whose_certificate_another_ca_signed_is_refused_at_once_without_retries(
    protocol_server, tls_proxy, tmp_path
):
    url, _ = tls_proxy
    stranger, _ = certificates_issue(tmp_path / "stranger", proxy_address="127.0.0.1", proxy_name="localhost")
    client = HttpCoreClient(url, token_file(protocol_server.root).read_text().strip(), ca_file=str(stranger))

    started = time.monotonic()
    with pytest.raises(ssl.SSLCertVerificationError):
        client.register(instance="impostor-check", processors=[])

    assert time.monotonic() - started < 5  # not the ten minutes of retries a reachable Core would get
