"""The cluster's test CA: the proxy's certificate is trusted through the CA file for its address and its name,
and not through another CA's."""

import socket
import ssl
import threading

import pytest

from scripts.cluster.certificates import certificates_issue


def _handshake(bundle, ca, server_hostname: str) -> None:
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(bundle)
    client = ssl.create_default_context(cafile=str(ca))
    ours, theirs = socket.socketpair()

    def serve():
        try:
            server.wrap_socket(ours, server_side=True).close()
        except (ssl.SSLError, OSError):
            ours.close()  # the client refused the certificate

    serving = threading.Thread(target=serve)
    serving.start()
    try:
        client.wrap_socket(theirs, server_hostname=server_hostname).close()
    finally:
        theirs.close()
        serving.join()


@pytest.mark.parametrize("server_hostname", ["127.0.0.1", "proxy.quire.test"])
def test_the_proxy_is_trusted_through_the_cluster_ca(tmp_path, server_hostname):
    ca, bundle = certificates_issue(tmp_path, proxy_address="127.0.0.1", proxy_name="proxy.quire.test")
    _handshake(bundle, ca, server_hostname)
    assert bundle.stat().st_mode & 0o077 == 0


def test_another_ca_does_not_vouch_for_the_proxy(tmp_path):
    _, bundle = certificates_issue(tmp_path / "ours", proxy_address="127.0.0.1", proxy_name="proxy.quire.test")
    stranger, _ = certificates_issue(tmp_path / "stranger", proxy_address="127.0.0.1", proxy_name="proxy.quire.test")
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(bundle, stranger, "127.0.0.1")
