"""The agent's HTTP client keeps its connections between calls, whichever thread makes them."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from quire_worker.client import KEEP_IDLE_CONNECTIONS, HttpCoreClient


class _Peer(BaseHTTPRequestHandler):
    """Answers every POST with a heartbeat-shaped body; the server counts the TCP connections it accepted."""

    protocol_version = "HTTP/1.1"  # keep-alive, as Core's server speaks

    def setup(self):
        super().setup()
        self.server.connections += 1

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.server.together is not None:
            self.server.together.wait(timeout=10)
        body = json.dumps({"session_id": "s", "state": "active"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if self.server.close_after_answer:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = self.server.drop_after_answer  # closed without saying so, as an idle timeout does

    def log_message(self, *args):
        pass


@pytest.fixture
def peer():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Peer)
    server.connections, server.close_after_answer, server.drop_after_answer = 0, False, False
    server.together = None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _client(server) -> HttpCoreClient:
    return HttpCoreClient(f"http://127.0.0.1:{server.server_address[1]}", "token", retry_deadline=2.0)


def _heartbeat(client: HttpCoreClient) -> None:
    client.session_heartbeat(session_id="s", health={})


def _heartbeat_on_a_new_thread(client: HttpCoreClient) -> None:
    thread = threading.Thread(target=_heartbeat, args=(client,))
    thread.start()
    thread.join()


def test_calls_from_one_thread_after_another_share_one_connection(peer):
    client = _client(peer)

    for _ in range(5):  # as the agent runs each job on a thread of its own
        _heartbeat_on_a_new_thread(client)

    assert peer.connections == 1


def test_calls_at_the_same_time_each_get_a_connection_and_keep_it_for_later(peer):
    client = _client(peer)
    barrier = threading.Barrier(3)

    def call_together():
        barrier.wait()
        client.session_heartbeat(session_id="s", health={})

    threads = [threading.Thread(target=call_together) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    opened = peer.connections
    for _ in range(3):
        _heartbeat_on_a_new_thread(client)

    assert 1 <= opened <= 3 and peer.connections == opened


def test_a_connection_the_server_closes_is_not_kept(peer):
    client = _client(peer)
    peer.close_after_answer = True

    for _ in range(3):
        client.session_heartbeat(session_id="s", health={})

    assert peer.connections == 3


def test_a_kept_connection_the_server_dropped_meanwhile_is_replaced_and_the_call_sent_again(peer, caplog):
    client = _client(peer)
    peer.drop_after_answer = True
    client.session_heartbeat(session_id="s", health={})
    time.sleep(0.2)  # the server has closed the kept connection by now

    assert client.session_heartbeat(session_id="s", health={})["state"] == "active"
    assert peer.connections == 2
    assert "retrying" not in caplog.text, "sent again at once on a fresh connection, not after a back-off"


def test_idle_connections_beyond_the_limit_are_closed(peer):
    client = _client(peer)
    burst = KEEP_IDLE_CONNECTIONS + 2

    def calls_all_open_at_once():
        peer.together = threading.Barrier(burst)  # no answer until every call has its connection
        threads = [threading.Thread(target=_heartbeat, args=(client,)) for _ in range(burst)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    calls_all_open_at_once()
    assert peer.connections == burst
    calls_all_open_at_once()

    assert peer.connections == burst + 2, "the kept ones were used again, the two beyond the limit were closed"
