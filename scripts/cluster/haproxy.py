"""HAProxy (Debian's, 2.6) in front of the Core replicas: TLS for browsers and agents, plain HTTP beside it,
health checks on ``/healthz``, no stickiness (any replica serves any request, long polls and WebSockets too)."""

from pathlib import Path


def haproxy_config(
    *,
    address: str,
    bundle: Path,
    replicas: dict[str, str],
    port: int = 8000,
    tls_port: int = 443,
    plain_port: int = 80,
) -> str:
    """``replicas``: name → address of each Core replica, all serving on ``port``."""
    servers = "\n".join(f"    server {name} {replica}:{port}" for name, replica in replicas.items())
    return f"""global
    maxconn 4000

defaults
    mode http
    timeout connect 3s
    # Long polls hold a request up to 25 s; an idle editor's WebSocket lives on as a tunnel.
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    timeout http-keep-alive 30s
    option forwardfor
    # A replica that refuses the connection (killed, restarting): the request goes to another one.
    retries 3
    option redispatch 1

frontend quire
    bind {address}:{tls_port} ssl crt {bundle}
    bind {address}:{plain_port}
    http-request set-header X-Forwarded-Proto https if {{ ssl_fc }}
    http-request set-header X-Forwarded-Proto http if !{{ ssl_fc }}
    default_backend core

backend core
    balance roundrobin
    # Which replica answered: the drill checks that two editors of one document were served by different ones.
    http-response set-header X-Quire-Replica %[srv_name]
    option httpchk GET /healthz
    http-check expect status 200
    # Checked every second; two failures take a replica out, two successes bring it back.
    default-server check inter 1s fall 2 rise 2
{servers}
"""
