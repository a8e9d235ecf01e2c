"""The converter reads uploaded documents in a sandbox: no checkout, a uid of its own, no capabilities.

Read from outside, as an attacker inside LibreOffice would find it: ``/proc/<pid>/status`` of the running
office and its view of the filesystem through ``/proc/<pid>/root``.
"""

import logging
import os
import re
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from django.conf import settings
from openpyxl import Workbook

from office import libreoffice as engine_module
from office.exceptions import ConverterNotSandboxed
from tests.office.documents import docx_with, pdf_text
from tests.office.test_libreoffice import convert, libreoffice_runtime

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def converter():
    runtime = libreoffice_runtime(slots=1)
    convert(runtime, docx_with(["warm"]), ".docx")  # the slot is up and has converted once
    yield runtime
    runtime.close()


def _descendants(root: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as status:
        return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)


def _office_processes(runtime) -> list[int]:
    [slot] = runtime.call(_live_slots(runtime.engine))
    offices = [pid for pid in _descendants(slot.process.pid) if _status(pid)["Name"].startswith("soffice")]
    assert offices, "the slot's office is running"
    return offices


async def _live_slots(engine):
    return list(engine._live)


def test_the_running_office_has_a_uid_of_its_own_and_no_capabilities(converter):
    for pid in _office_processes(converter):
        status = _status(pid)
        assert int(status["Uid"].split()[0]) != os.getuid()
        assert int(status["Gid"].split()[0]) != os.getgid()
        assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0000000000000000"
        assert status["NoNewPrivs"] == "1"


def test_the_office_sees_nothing_of_the_checkout_or_the_hosts_secrets(converter):
    for pid in _office_processes(converter):
        root = Path(f"/proc/{pid}/root")
        assert (root / "usr/bin").is_dir()  # the view is readable from here at all
        for hidden in (settings.VAR_DIR, settings.BASE_DIR, Path("/etc/passwd"), Path("/root"), Path("/home")):
            assert not (root / str(hidden).lstrip("/")).exists(), hidden
        assert not (root / "var/run/postgresql").exists()  # nor the database's socket


def test_the_office_runs_under_limits_and_in_namespaces_of_its_own(converter):
    for pid in _office_processes(converter):
        with open(f"/proc/{pid}/limits") as limits:
            text = limits.read()
        assert re.search(r"Max address space\s+8589934592", text)
        assert re.search(r"Max processes\s+512", text)
        assert re.search(r"Max open files\s+1024", text)
        for namespace in ("net", "pid", "ipc", "uts", "mnt"):
            assert os.readlink(f"/proc/{pid}/ns/{namespace}") != os.readlink(f"/proc/self/ns/{namespace}")


SAVED = "value-saved-with-the-file"


def _xlsx_with_a_cached_formula() -> bytes:
    """A workbook whose A1 holds =INFO("osversion") and the value saved with it (openpyxl writes no values:
    the cell is patched in; its generator is not Excel, so LibreOffice would recalculate everything)."""
    workbook = Workbook()
    workbook.active["A1"] = '=INFO("osversion")'
    workbook.active["A2"] = "second cell"
    buffer = BytesIO()
    workbook.save(buffer)
    source, patched = zipfile.ZipFile(BytesIO(buffer.getvalue())), BytesIO()
    with zipfile.ZipFile(patched, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "xl/worksheets/sheet1.xml":
                cell = f'<c r="A1" t="str"><f>INFO("osversion")</f><v>{SAVED}</v></c>'.encode()
                data = re.sub(rb'<c r="A1"[^>]*>.*?</c>', cell, data)
            target.writestr(item, data)
    return patched.getvalue()


ODS_CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2" office:version="1.2"><office:body><office:spreadsheet>
<table:table table:name="Sheet1"><table:table-row>
<table:table-cell table:formula="of:=INFO(&quot;osversion&quot;)" office:value-type="string"
 office:string-value="{SAVED}"><text:p>{SAVED}</text:p></table:table-cell>
</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"""
ODS_MANIFEST = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">
<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>
<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>"""


def _ods_with_a_cached_formula() -> bytes:
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as document:
        document.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", zipfile.ZIP_STORED)
        document.writestr("META-INF/manifest.xml", ODS_MANIFEST)
        document.writestr("content.xml", ODS_CONTENT)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("extension", "make"), [(".xlsx", _xlsx_with_a_cached_formula), (".ods", _ods_with_a_cached_formula)]
)
def test_a_spreadsheet_shows_its_saved_values_not_a_recalculation(converter, extension, make):
    text = pdf_text(convert(converter, make(), extension).pdf)

    assert SAVED in text
    assert os.uname().release.split("-")[0] not in text  # the host's kernel, which INFO("osversion") prints


def test_a_host_that_cannot_sandbox_the_converter_refuses_and_says_so(monkeypatch, caplog):
    monkeypatch.setattr(engine_module, "sandbox_unavailable_reason", lambda: "bubblewrap is not installed")
    runtime = libreoffice_runtime(slots=1)
    try:
        with (
            caplog.at_level(logging.ERROR, logger="office.libreoffice"),
            pytest.raises(ConverterNotSandboxed) as refused,
        ):
            convert(runtime, docx_with(["untrusted"]), ".docx")
    finally:
        runtime.close()

    assert refused.value.details == {"reason": "bubblewrap is not installed"}
    assert "office previews are refused" in caplog.text and "OFFICE_ALLOW_UNSANDBOXED" in caplog.text


def test_the_operator_may_opt_out_explicitly(monkeypatch, caplog):
    monkeypatch.setattr(engine_module, "sandbox_unavailable_reason", lambda: "bubblewrap is not installed")
    runtime = libreoffice_runtime(slots=1, allow_unsandboxed=True)
    try:
        with caplog.at_level(logging.WARNING, logger="office.libreoffice"):
            conversion = convert(runtime, docx_with(["opted", "out"]), ".docx")
    finally:
        runtime.close()

    assert "opted out" in pdf_text(conversion.pdf)
    assert "WITHOUT a sandbox" in caplog.text
