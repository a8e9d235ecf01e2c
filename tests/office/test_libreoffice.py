"""The real engine: warm LibreOffice slots converting generated documents, failing, hanging, shared."""

import asyncio
import os
import select
import signal

import pytest
from asgiref.sync import async_to_sync

from office.exceptions import ConversionFailed, ConversionTimedOut
from office.host import HostLimits
from office.libreoffice import EngineConfig, LibreOfficeEngine
from office.runtime import HostRuntime, host_runtime_replace
from tests.factories import bearer_token_for
from tests.office.asgi import asgi_get
from tests.office.documents import docx_with, pdf_text, pptx_with, xlsx_with

pytestmark = pytest.mark.slow


def libreoffice_runtime(**config) -> HostRuntime:
    engine = EngineConfig(**config)
    return HostRuntime(
        engine_factory=lambda: LibreOfficeEngine(engine),
        limits=HostLimits(max_running=engine.slots),
        background_enabled=True,
    )


@pytest.fixture(scope="module")
def libreoffice():
    runtime = libreoffice_runtime(slots=2)
    yield runtime
    runtime.close()


def convert(runtime: HostRuntime, data: bytes, extension: str):
    return runtime.call(runtime.engine.convert(source=data, extension=extension))


@pytest.mark.parametrize(("extension", "make"), [(".docx", docx_with), (".xlsx", xlsx_with), (".pptx", pptx_with)])
def test_a_generated_document_becomes_a_pdf_containing_its_words(libreoffice, extension, make):
    words = ["Quire", "preview", f"marker{extension.lstrip('.')}"]
    conversion = convert(libreoffice, make(words), extension)
    assert conversion.pdf.startswith(b"%PDF")
    assert conversion.page_count == 1
    text = pdf_text(conversion.pdf)
    assert all(word in text for word in words), text


def test_page_count_follows_the_slides(libreoffice):
    conversion = convert(libreoffice, pptx_with(["deck"], slides=3), ".pptx")
    assert conversion.page_count == 3


def test_a_corrupt_file_fails_clearly_and_the_converter_survives(libreoffice):
    generation = libreoffice.engine.generation
    with pytest.raises(ConversionFailed) as failure:
        convert(libreoffice, b"PK\x03\x04 this is no document", ".docx")
    assert "could not convert" in failure.value.message
    assert "survivor" in pdf_text(convert(libreoffice, docx_with(["survivor"]), ".docx").pdf)
    assert libreoffice.engine.generation == generation


def test_a_hung_conversion_is_killed_at_the_timeout_and_the_next_one_works():
    runtime = libreoffice_runtime(slots=1, conversion_timeout=3)
    try:
        convert(runtime, docx_with(["warming"]), ".docx")
        [group] = runtime.engine.process_groups()
        members = [os.pidfd_open(pid) for pid in group_members(group)]
        assert len(members) >= 3  # sandbox, bridge, office
        os.killpg(group, signal.SIGSTOP)  # the whole slot freezes: a converter that never answers
        with pytest.raises(ConversionTimedOut):
            convert(runtime, docx_with(["stuck"]), ".docx")
        assert all_exit(members, within_seconds=10), "a process of the hung slot lives on"
        assert runtime.engine.generation == 2
        assert "afterwards" in pdf_text(convert(runtime, docx_with(["afterwards"]), ".docx").pdf)
    finally:
        runtime.close()


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_previews_of_one_file_make_exactly_one_conversion(
    libreoffice, owner, owner_client, project, settings
):
    settings.OFFICE_BACKGROUND_ENABLED = False  # no prewarm: the ten previews alone ask for it
    data = docx_with(["together"])
    owner_client.put(f"/v1/projects/{project.pk}/files/shared.docx", data, content_type="application/octet-stream")
    url, token = f"/v1/projects/{project.pk}/files/shared.docx/preview.pdf", bearer_token_for(owner)
    before = libreoffice.snapshot().outcomes.get("succeeded", 0)

    async def ten_at_once():
        return await asyncio.gather(*(asgi_get(url, token=token) for _ in range(10)))

    host_runtime_replace(libreoffice)
    try:
        responses = async_to_sync(ten_at_once)()
    finally:
        host_runtime_replace(None)
    assert [response.status for response in responses] == [200] * 10
    assert len({response.body for response in responses}) == 1
    assert "together" in pdf_text(responses[0].body)
    assert libreoffice.snapshot().outcomes["succeeded"] - before == 1


def group_members(group: int) -> list[int]:
    """Live processes of a process group, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                members.append(int(entry))
    return members


def all_exit(pidfds: list[int], *, within_seconds: float) -> bool:
    """Wait until every process behind ``pidfds`` has exited (a pidfd turns readable then)."""
    waiting = set(pidfds)
    while waiting:
        ready, _, _ = select.select(list(waiting), [], [], within_seconds)
        if not ready:
            return False
        waiting -= set(ready)
    return True


@pytest.mark.parametrize(("paper_size", "points"), [("a4", (595, 842)), ("letter", (612, 792))])
def test_a_sheet_that_names_no_paper_is_laid_out_on_the_configured_paper(paper_size, points):
    from io import BytesIO

    from pypdf import PdfReader

    runtime = libreoffice_runtime(slots=1, paper_size=paper_size)
    try:
        conversion = convert(runtime, xlsx_with(["no paper size"]), ".xlsx")
    finally:
        runtime.close()

    page = PdfReader(BytesIO(conversion.pdf)).pages[0].mediabox
    assert (round(float(page.width)), round(float(page.height))) == points
