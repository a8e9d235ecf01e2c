"""A CA of the cluster's own and the proxy's certificate signed by it (trustme), as docs/deployment.md
describes for real ones: agents verify the proxy against the CA file they are given."""

from pathlib import Path

import trustme


def certificates_issue(directory: Path, *, proxy_address: str, proxy_name: str) -> tuple[Path, Path]:
    """Write ``ca.pem`` and ``proxy.pem`` (certificate then key, as HAProxy reads it); return both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    authority = trustme.CA(organization_name="Quire cluster CA")
    proxy = authority.issue_cert(proxy_address, proxy_name, common_name=proxy_name)
    ca, bundle = directory / "ca.pem", directory / "proxy.pem"
    authority.cert_pem.write_to_path(str(ca))
    bundle.write_bytes(b"".join(pem.bytes() for pem in proxy.cert_chain_pems) + proxy.private_key_pem.bytes())
    bundle.chmod(0o600)
    return ca, bundle
