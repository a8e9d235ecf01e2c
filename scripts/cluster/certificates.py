"""A CA of the cluster's own and the proxy's certificate signed by it (openssl), as docs/deployment.md
describes for real ones: agents verify the proxy against the CA file they are given."""

import subprocess
from pathlib import Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def certificates_issue(directory: Path, *, proxy_address: str, proxy_name: str) -> tuple[Path, Path]:
    """Write ``ca.pem`` and ``proxy.pem`` (certificate then key, as HAProxy reads it); return both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca, key, request, certificate = (
        directory / name for name in ("ca.key", "ca.pem", "proxy.key", "proxy.csr", "proxy.crt")
    )
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "30",
        "-subj",
        "/CN=Quire cluster CA",
        "-keyout",
        str(ca_key),
        "-out",
        str(ca),
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={proxy_name}", "-keyout", str(key), "-out", str(request)
    )
    extensions = directory / "proxy.ext"
    extensions.write_text(
        f"subjectAltName=IP:{proxy_address},DNS:{proxy_name}\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(request),
        "-CA",
        str(ca),
        "-CAkey",
        str(ca_key),
        "-CAcreateserial",
        "-days",
        "30",
        "-extfile",
        str(extensions),
        "-out",
        str(certificate),
    )
    bundle = directory / "proxy.pem"
    bundle.write_text(certificate.read_text() + key.read_text())
    bundle.chmod(0o600)
    return ca, bundle
