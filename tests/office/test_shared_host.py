"""One Office host per machine: its server processes share one queue, cache, set of limits and converters.

The service is real (``office/host_service.py`` on a Unix socket) and reads the files from the real
workspace; the conversions run on a fake engine where a test must hold one, and on LibreOffice where real
processes are started.
"""

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from office import services
from office.exceptions import ConversionFailed, ConverterUnavailable
from office.host import Priority
from office.host_client import RemoteHost
from office.host_service import HostService
from tests.factories import ProjectFactory, bearer_token_for
from tests.live_server import ROOT, database_environment_of_tests, quire_server
from tests.office.conftest import installed_runtime
from tests.office.documents import docx_with, pdf_text
from tests.office.fakes import FakeEngine
from workspace import facade as workspace
from workspace.services import file_write

pytestmark = pytest.mark.django_db(transaction=True)  # the service reads the files on connections of its own


@pytest.fixture
def served(tmp_path, settings):
    """The machine's host on a fake engine, serving on a socket; ``served.client()`` is a server process's side."""
    settings.QUIRE_STORAGE_DIR = str(tmp_path / "storage")
    settings.OFFICE_BACKGROUND_ENABLED = False  # no prewarm of the files the tests write
    runtime = installed_runtime(FakeEngine, max_running=1)
    service = HostService(runtime, services.source_reader, services.prewarm_finished)
    socket_path = tmp_path / "office.sock"
    service.start(socket_path)

    class Served:
        engine: FakeEngine = runtime.engine
        host = runtime.host
        prewarms_running = staticmethod(lambda: service.prewarms)

        @staticmethod
        def client() -> RemoteHost:
            return RemoteHost(str(socket_path))

        @staticmethod
        def on_host(coroutine):
            return runtime.call(coroutine, timeout=10)

        @staticmethod
        def now(action):
            """``action()`` run on the host's loop, where the host's state may be read and its calls finished."""
            return runtime.call(_returning(action), timeout=10)

    yield Served
    service.stop()
    from office.runtime import host_runtime_replace

    host_runtime_replace(None)
    runtime.close()


async def _returning(action):
    return action()


def a_file(owner, path: str, words: list[str]):
    project = ProjectFactory(owner=owner)
    file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=docx_with(words))
    return services._source_of(workspace.file_meta_for(user_id=owner.pk, project_id=project.pk, path=path))


def convert(client: RemoteHost, source):
    return async_to_sync(client.convert)(source=source, read=None, priority=Priority.FOREGROUND)


def test_a_preview_one_server_process_made_is_a_cache_hit_for_another(served, owner):
    source = a_file(owner, "report.docx", ["shared"])

    made = _converting_while(served, served.client(), source, finish=(b"%PDF-shared", 2))
    again = convert(served.client(), source)

    assert (made.cache_hit, again.cache_hit) == (False, True)
    assert (again.pdf, again.page_count, again.source_sha256) == (b"%PDF-shared", 2, source.version)
    assert len(served.engine.calls) == 1


def _converting_while(served, client: RemoteHost, source, *, finish):
    """Run ``client``'s conversion while the fake engine finishes its first call with ``finish``."""

    async def scenario():
        task = asyncio.create_task(client.convert(source=source, read=None, priority=Priority.FOREGROUND))
        call = await asyncio.to_thread(served.on_host, served.engine.call(len(served.engine.calls) + 1))
        served.now(lambda: call.finish(*finish))
        return await task

    return async_to_sync(scenario)()


def test_the_machines_converter_limit_binds_every_server_process(served, owner):
    """One slot on the machine: a second process's conversion waits for the first, not for a slot of its own."""
    first, second = a_file(owner, "one.docx", ["one"]), a_file(owner, "two.docx", ["two"])

    async def scenario():
        one = asyncio.create_task(served.client().convert(source=first, read=None, priority=Priority.FOREGROUND))
        two = asyncio.create_task(served.client().convert(source=second, read=None, priority=Priority.FOREGROUND))
        call = await asyncio.to_thread(served.on_host, served.engine.call(1))
        await _until(lambda: served.now(lambda: served.host.queued(Priority.FOREGROUND)) == 1)
        assert len(served.engine.calls) == 1, "the second waits in the machine's queue"
        served.now(lambda: call.finish(b"%PDF-1", 1))
        second_call = await asyncio.to_thread(served.on_host, served.engine.call(2))
        served.now(lambda: second_call.finish(b"%PDF-2", 1))
        return await one, await two

    one, two = async_to_sync(scenario)()

    assert (one.pdf, two.pdf) == (b"%PDF-1", b"%PDF-2")


async def _until(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(condition):
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_a_server_process_whose_client_left_stops_the_conversion_on_the_host(served, owner):
    source = a_file(owner, "left.docx", ["left"])

    async def scenario():
        waiting = asyncio.create_task(served.client().convert(source=source, read=None, priority=Priority.FOREGROUND))
        call = await asyncio.to_thread(served.on_host, served.engine.call(1))
        waiting.cancel()  # the person closed the tab: the view's task is cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        await _until(lambda: call.cancelled.is_set())
        await _until(lambda: served.now(lambda: served.host.running) == 0)

    async_to_sync(scenario)()

    assert len(served.engine.calls) == 1


def test_a_conversion_error_reaches_the_server_process_as_its_own_error(served, owner):
    source = a_file(owner, "broken.docx", ["broken"])

    async def scenario():
        task = asyncio.create_task(served.client().convert(source=source, read=None, priority=Priority.FOREGROUND))
        call = await asyncio.to_thread(served.on_host, served.engine.call(1))
        served.now(lambda: call.fail(ConversionFailed(details={"reason": "damaged"})))
        return await task

    with pytest.raises(ConversionFailed) as raised:
        async_to_sync(scenario)()
    assert raised.value.details == {"reason": "damaged"}


def test_figures_and_the_background_switch_are_the_machines(served, owner):
    client, source = served.client(), a_file(owner, "later.docx", ["later"])

    client.background_set(False)
    assert client.submit(source=source, read=None, priority=Priority.BACKGROUND).result(timeout=5) is None
    _wait_for(lambda: served.prewarms_running() == 0)  # ended on the host: refused, background is off
    assert (served.host.background_enabled, served.engine.calls) == (False, [])

    client.background_set(True)
    client.submit(source=source, read=None, priority=Priority.BACKGROUND)
    served.on_host(served.engine.call(1))  # the same prewarm converts once the machine's switch is on
    assert client.snapshot().running == 1


def _wait_for(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_service_that_is_not_running_is_503_converter_unavailable(tmp_path, owner):
    client = RemoteHost(str(tmp_path / "nobody-listens.sock"))

    with pytest.raises(ConverterUnavailable):
        convert(client, a_file(owner, "x.docx", ["x"]))
    with pytest.raises(ConverterUnavailable):
        client.snapshot()


# -- real processes: the service, two server processes, LibreOffice ------------------------------------------


@contextlib.contextmanager
def office_host_process(socket_path: Path, storage: Path, log: Path):
    env = {
        **os.environ,
        **database_environment_of_tests(),
        "QUIRE_STORAGE_DIR": str(storage),
        "OFFICE_SLOTS": "1",
        "OFFICE_HOST_SOCKET": "",
    }
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "office_host", "--socket", str(socket_path)],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while not socket_path.exists():
            assert process.poll() is None, log.read_text()[-2000:]
            assert time.monotonic() < deadline, "the office host did not start"
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)


def preview(url: str, token: str, project_id, path: str) -> tuple[dict, bytes]:
    request = urllib.request.Request(  # noqa: S310  a test server on loopback
        f"{url}/v1/projects/{project_id}/files/{path}/preview.pdf", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310  a test server on loopback
        return {name.lower(): value for name, value in response.headers.items()}, response.read()


def office_figures(url: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as response:  # noqa: S310  a test server on loopback
        lines = response.read().decode().splitlines()
    wanted = ("quire_office_cache_hits_total", 'quire_office_conversions_total{outcome="succeeded"}')
    return {line.split()[0]: float(line.split()[1]) for line in lines if line.startswith(wanted)}


@pytest.mark.slow
def test_two_server_processes_of_one_machine_convert_on_its_one_host(owner, tmp_path):
    storage = tmp_path / "storage"
    storage.mkdir()
    socket_path = tmp_path / "office.sock"
    project = ProjectFactory(owner=owner)
    token = bearer_token_for(owner)
    shared = {"OFFICE_HOST": "shared", "OFFICE_HOST_SOCKET": str(socket_path), "OFFICE_BACKGROUND_ENABLED": "false"}
    with (
        office_host_process(socket_path, storage, tmp_path / "office-host.log"),
        quire_server(storage_dir=storage, extra_env=shared) as first,
        quire_server(storage_dir=storage, extra_env=shared) as second,
    ):
        written = urllib.request.Request(  # noqa: S310  a test server on loopback
            f"{first}/v1/projects/{project.pk}/files/notes.docx",
            data=docx_with(["Machine", "wide"]),
            method="PUT",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/octet-stream"},
        )
        urllib.request.urlopen(written, timeout=30).read()  # noqa: S310  a test server on loopback
        made_headers, made = preview(first, token, project.pk, "notes.docx")
        again_headers, again = preview(second, token, project.pk, "notes.docx")
        figures = office_figures(first), office_figures(second)

    assert (made_headers["x-office-cache"], again_headers["x-office-cache"]) == ("miss", "hit")
    assert made == again and "Machine wide" in pdf_text(made)
    assert made_headers["x-office-converter-generation"] == again_headers["x-office-converter-generation"]
    machine = {"quire_office_cache_hits_total": 1.0, 'quire_office_conversions_total{outcome="succeeded"}': 1.0}
    assert figures == (machine, machine), "either server process reports the machine's one host"


def test_metrics_say_when_the_machines_host_is_not_answering(tmp_path):
    from office.metrics import OfficeCollector
    from office.runtime import host_runtime_replace

    previous = host_runtime_replace(RemoteHost(str(tmp_path / "nobody-listens.sock")))
    try:
        families = list(OfficeCollector().collect())
    finally:
        host_runtime_replace(previous)

    assert [(family.name, family.samples[0].value) for family in families] == [("quire_office_host_up", 0)]


def test_a_file_write_succeeds_while_the_machines_host_is_not_answering(owner, owner_client, settings, tmp_path):
    """Prewarming is speculation: with the preview service down, the upload is stored and answered as ever."""
    from office.runtime import host_runtime_replace

    settings.QUIRE_STORAGE_DIR = str(tmp_path / "storage")
    settings.OFFICE_HOST_SOCKET = str(tmp_path / "nobody-listens.sock")
    previous = host_runtime_replace(RemoteHost(settings.OFFICE_HOST_SOCKET))
    project = ProjectFactory(owner=owner)
    try:
        for attempt in ("first", "again"):
            response = owner_client.put(
                f"/v1/projects/{project.pk}/files/draft.docx",
                docx_with([attempt]),
                content_type="application/octet-stream",
            )
            assert response.status_code in (200, 201), response.content
    finally:
        host_runtime_replace(previous)


def test_without_settings_server_processes_send_previews_to_the_machines_one_host(settings, monkeypatch):
    from foundation.env import VAR_DIR, env

    monkeypatch.delenv("OFFICE_HOST", raising=False)
    monkeypatch.delenv("OFFICE_HOST_SOCKET", raising=False)
    settings.OFFICE_HOST = env("OFFICE_HOST")
    settings.OFFICE_HOST_SOCKET = env("OFFICE_HOST_SOCKET") or str(VAR_DIR / "office.sock")

    host = services._host_from_settings()

    assert isinstance(host, RemoteHost) and host.socket_path == str(VAR_DIR / "office.sock")


def test_a_server_process_is_given_a_host_of_its_own_only_when_asked(settings):
    from office.runtime import HostRuntime

    settings.OFFICE_HOST = "process"
    host = services._host_from_settings()
    try:
        assert isinstance(host, HostRuntime)
    finally:
        host.close()
