"""Write the hostile-input corpora. Deterministic: running it again writes the same bytes.

    .venv/bin/python -m tests.corpora.generate

Each file's expected refusal lives in ``expectations.json`` beside it; ``tests/test_corpora.py``
replays every file through the component that must refuse it.
"""

import copy
import datetime
import io
import json
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# pypdf draws a fresh file identifier for every encrypted file it writes.
NOT_REPRODUCIBLE = frozenset({"pdf/encrypted.pdf"})
FIXED = (1980, 1, 1, 0, 0, 0)
CT_MAIN = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
CONTENT_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    f'<Override PartName="/ppt/presentation.xml" ContentType="{CT_MAIN}"/></Types>'
)
RELS = (
    '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"'
    ' Target="ppt/presentation.xml"/></Relationships>'
)


def _zip(entries: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=FIXED), data, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def _pptx(extra: dict[str, bytes | str] | None = None, **replace) -> bytes:
    parts = {"[Content_Types].xml": CONTENT_TYPES, "_rels/.rels": RELS, "ppt/presentation.xml": "<p/>"}
    return _zip({**parts, **replace, **(extra or {})})


def _crc_broken(archive: bytes, name: str) -> bytes:
    """The archive with the central directory's CRC-32 of ``name`` flipped, so reading that entry fails."""
    data = bytearray(archive)
    at = data.index(b"PK\x01\x02")
    while data[at + 46 : at + 46 + int.from_bytes(data[at + 28 : at + 30], "little")] != name.encode():
        at = data.index(b"PK\x01\x02", at + 4)
    data[at + 16] ^= 0xFF
    return bytes(data)


def pptx_corpus() -> dict[str, tuple[bytes, str]]:
    laughs = (
        '<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
        + "]>"
    )
    inner_bomb = _zip({"zeros.bin": b"\0" * 30_000_000})
    return {
        "ratio-bomb.pptx": (_pptx({"ppt/media/zeros.bin": b"\0" * 40_000_000}), "pptx_compression_ratio"),
        "many-entries.pptx": (_pptx({f"ppt/media/m{i}.bin": b"" for i in range(5001)}), "pptx_too_many_entries"),
        "nested-bomb.pptx": (_pptx({"ppt/embeddings/bomb.zip": inner_bomb}), "processor_never_expands_it"),
        "traversal.pptx": (_pptx({"../../etc/cron.d/evil": "x"}), "pptx_unsafe_entry_name"),
        "absolute.pptx": (_pptx({"/etc/passwd": "x"}), "pptx_unsafe_entry_name"),
        "billion-laughs.pptx": (
            _pptx(**{"[Content_Types].xml": f'<?xml version="1.0"?>{laughs}<Types>&i;</Types>'}),
            "pptx_invalid_xml",
        ),
        "external-entity.pptx": (
            _pptx(
                **{
                    "_rels/.rels": '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                    "<Relationships>&x;</Relationships>"
                }
            ),
            "pptx_invalid_xml",
        ),
        "not-a-zip.pptx": (b"%PDF-1.4 this is not a presentation", "pptx_not_a_zip"),
        "truncated.pptx": (_pptx()[:-40], "pptx_not_a_zip"),
        "bad-crc.pptx": (_crc_broken(_pptx(), "[Content_Types].xml"), "pptx_invalid_xml"),
    }


def bundle_corpus() -> dict[str, tuple[bytes, str]]:
    """project-bundle/v1 archives a hostile Core would never send, refused by the agent's unpacker."""
    import tarfile

    def tar(members: list[tuple[str, bytes, bytes]]) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for name, data, kind in members:
                info = tarfile.TarInfo(name)
                info.mtime = 0
                if kind == b"link":
                    info.type, info.linkname = tarfile.SYMTYPE, data.decode()
                    archive.addfile(info)
                else:
                    info.size = len(data)
                    archive.addfile(info, io.BytesIO(data))
        return buffer.getvalue()

    manifest = json.dumps({"schema": "project-bundle/v1", "files": []}).encode()
    return {
        "traversal.tar": (tar([("manifest.json", manifest, b""), ("files/../../escape.tex", b"x", b"")]), "unsafe"),
        "absolute.tar": (tar([("manifest.json", manifest, b""), ("/etc/escape.tex", b"x", b"")]), "unsafe"),
        "symlink.tar": (tar([("manifest.json", manifest, b""), ("files/passwd", b"/etc/passwd", b"link")]), "unsafe"),
        "undeclared-file.tar": (tar([("manifest.json", manifest, b""), ("files/extra.tex", b"x", b"")]), "unsafe"),
    }


def _pdf(pages: int, *, password: str | None = None) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=72, height=72)
    writer.add_metadata({"/Producer": "Quire corpus", "/CreationDate": "D:20000101000000Z"})
    if password:
        writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def pdf_corpus() -> dict[str, tuple[bytes, str]]:
    header = b"%PDF-1.7\n"
    return {
        "truncated.pdf": (header + b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R", "400 pdf_unreadable"),
        "not-a-pdf.pdf": (b"\x89PNG\r\n\x1a\n not a pdf at all", "400 not_a_pdf"),
        "empty.pdf": (b"", "400 not_a_pdf"),
        "encrypted.pdf": (_pdf(1, password="secret"), "400 pdf_encrypted"),
        "huge-page-count.pdf": (_pdf(5000), "processor truncated"),
    }


def office_corpus() -> dict[str, tuple[bytes, str]]:
    """A document LibreOffice takes far longer than a preview may: killed at the timeout."""
    import docx

    document = docx.Document()
    first = document.add_paragraph(_slow_paragraph(0))._p
    # python-docx finds the section break anew for each paragraph it adds, which is quadratic: the same
    # paragraphs are laid down as copies of the first, each put before the break directly.
    section_break = document.element.body.sectPr
    for index in range(1, 60_000):
        paragraph = copy.deepcopy(first)
        paragraph.xpath(".//w:t")[0].text = _slow_paragraph(index)
        section_break.addprevious(paragraph)
    fixed = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    document.core_properties.created = document.core_properties.modified = fixed
    buffer = io.BytesIO()
    document.save(buffer)
    return {"slow-to-lay-out.docx": (_zip_normalized(buffer.getvalue()), "conversion_timed_out")}


def _slow_paragraph(index: int) -> str:
    return f"Paragraph {index} keeps the layout engine busy for a long, long while."


def _zip_normalized(data: bytes) -> bytes:
    """Rewrite a zip with fixed timestamps so the corpus stays byte-for-byte reproducible."""
    source = zipfile.ZipFile(io.BytesIO(data))
    return _zip({info.filename: source.read(info.filename) for info in source.infolist()})


def tex_corpus() -> dict[str, tuple[bytes, str]]:
    return {
        "endless-loop.tex": (
            b"\\documentclass{article}\\begin{document}\\loop\\iftrue\\repeat\\end{document}",
            "resource_limit",
        ),
        "output-flood.tex": (
            b"\\documentclass{article}\\begin{document}\\newcount\\n\\loop\\message{flood flood flood flood}"
            b"\\advance\\n by 1 \\ifnum\\n<100000000 \\repeat\\end{document}",
            "resource_limit",
        ),
        "reads-passwd.tex": (
            b"\\documentclass{article}\\begin{document}\\input{/etc/passwd}\\end{document}",
            "no_leak",
        ),
        "shell-escape.tex": (
            b"\\documentclass{article}\\begin{document}\\immediate\\write18{touch /tmp/quire-corpus-pwned}"
            b"ok\\end{document}",
            "no_shell",
        ),
    }


def yjs_corpus() -> dict[str, tuple[bytes, str]]:
    return {
        "garbage.bin": (bytes((index * 37 + 11) % 256 for index in range(4096)), "invalid_update"),
        "truncated.bin": (b"\x01\x01\xc8\x9a\x02\x00\x04", "invalid_update"),
    }


# Raw HTTP requests with {project}, {token} and {length} placeholders; the test fills them in.
HTTP_CORPUS = {
    "bad-json.http": (b"POST /v1/projects HTTP/1.1\r\nAuthorization: Bearer {token}\r\n"
                      b"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{\"name\": \"x\",,}",
                      "400 malformed_request"),
    "deep-json.http": (b"POST /v1/projects HTTP/1.1\r\nAuthorization: Bearer {token}\r\n"
                       b"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
                       + b"[" * 50_000 + b"]" * 50_000, "400 malformed_request"),
    "wrong-content-type.http": (b"POST /v1/projects HTTP/1.1\r\nAuthorization: Bearer {token}\r\n"
                                b"Content-Type: application/xml\r\nContent-Length: {length}\r\n\r\n<p/>",
                                "415 unsupported_media_type"),
    "form-encoded-file.http": (b"PUT /v1/projects/{project}/files/a.tex HTTP/1.1\r\n"
                               b"Authorization: Bearer {token}\r\n"
                               b"Content-Type: application/x-www-form-urlencoded\r\n"
                               b"Content-Length: {length}\r\n\r\na=1",
                               "415 unsupported_media_type"),
    "oversized-body.http": (b"PUT /v1/projects/{project}/files/big.bin HTTP/1.1\r\nAuthorization: Bearer {token}\r\n"
                            b"Content-Type: application/octet-stream\r\nContent-Length: 999999999999\r\n\r\n",
                            "413 payload_too_large"),
    "invalid-utf8-path.http": (b"PUT /v1/projects/{project}/files/%FF%FE.tex HTTP/1.1\r\nAuthorization: Bearer {token}"
                               b"\r\nContent-Type: text/plain\r\nContent-Length: {length}\r\n\r\nhello",
                               "400 invalid_path"),
    "invalid-utf8-header.http": (b"POST /v1/projects/{project}/builds HTTP/1.1\r\nAuthorization: Bearer {token}\r\n"
                                 b"Idempotency-Key: caf\xe9\xff\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: {length}\r\n\r\n{}", "400 idempotency_key_invalid"),
    "invalid-utf8-token.http": (b"GET /v1/projects HTTP/1.1\r\nAuthorization: Bearer \xff\xfe\xfd\r\n\r\n",
                                "401 authentication_failed"),
}  # fmt: skip


def main() -> None:
    expectations = {}
    http = {name: (data, expected) for name, (data, expected) in HTTP_CORPUS.items()}
    for folder, corpus in (
        ("pptx", pptx_corpus()),
        ("bundles", bundle_corpus()),
        ("pdf", pdf_corpus()),
        ("tex", tex_corpus()),
        ("yjs", yjs_corpus()),
        ("http", http),
        ("office", office_corpus()),
    ):
        (HERE / folder).mkdir(exist_ok=True)
        for name, (data, expected) in corpus.items():
            (HERE / folder / name).write_bytes(data)
            expectations[f"{folder}/{name}"] = expected
    (HERE / "expectations.json").write_text(json.dumps(expectations, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
