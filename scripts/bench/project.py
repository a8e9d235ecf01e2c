"""`make bench-project`: a project in and out as a zip, its output PDF downloaded, and every member's PDF pane
refreshed after a build, each beside its peer in the same run.

The server is the real one (gunicorn + uvicorn, 2 processes as `make run` starts, production-like settings) on
the benchmark's own database, with one worker agent running TeX Live for the builds.

Each phase warms the servers up first (an upload and a download they do not count). Zip in and out
(``zip_in_ms_<files>_files_<mb>mb``, ``zip_out_ms_…``): a project of BENCH_FILES (default
1,000) files and BENCH_MB (default 50) MB: nine tenths LaTeX sources (text that deflates as prose does), one
tenth figures (incompressible bytes named ``.png``, as photographs and plots are). The same zip is
  - posted as a new project (``POST /v1/projects/archive``, over HTTP, until the 201) against ``unzip -q`` of it
    into an empty directory (``unzip_ms_…``);
  - read back (``GET /v1/projects/{id}/archive``, streamed, every byte read) against ``zip -r -q`` of the
    directory ``unzip`` made (``zip_ms_…``).
Quire's zip stores what is compressed already and deflates the rest; ``zip -r`` deflates every file.
Ratios: ``zip_in_vs_unzip_ratio`` and ``zip_out_vs_zip_ratio`` (targets ≤ 2).

PDF download (``output_pdf_ms_p50|p99_20mb``): ``GET /v1/projects/{id}/output/pdf`` of a 20 MB output, BENCH_N
(default 20) times one after another, every byte read; the peer is the same file served from disk by Python's
own static file server (``http.server``, in a process of its own): ``static_pdf_ms_p50_20mb`` and
``output_pdf_vs_static_ratio``.

Pane refresh (``pane_refresh_ms_p50|p99_members_10``): 10 members each have the project open in Chromium (a
browser context each, signed in through the form); the owner edits ``main.tex`` and builds through the API,
BENCH_BUILDS (default 5) times a repetition. A sample is, for each build and each member, the moment the
member's pane fired ``quire:pdf-shown`` for that build's PDF (the page's clock) minus the build's
``completed_at`` (the database's clock): both are this machine's clock. A pane that never shows a build fails
the benchmark. Target: p99 ≤ 2,000 ms.

BENCH_PHASES (default ``zip,pdf,pane``) runs only some of the three.
"""

import http.server
import io
import json
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request
import uuid
import zipfile
from datetime import datetime
from functools import partial
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report

FILES = int(os.environ.get("BENCH_FILES", "1000"))
MEGABYTES = int(os.environ.get("BENCH_MB", "50"))
BUILDS = int(os.environ.get("BENCH_BUILDS", "5"))
MEMBERS = int(os.environ.get("BENCH_MEMBERS", "10"))
PDF_MEGABYTES = int(os.environ.get("BENCH_PDF_MB", "20"))
PHASES = os.environ.get("BENCH_PHASES", "zip,pdf,pane").split(",")
LATEX = "latex.compile.pdf/v1"
PASSWORD = "bench-password"  # noqa: S105  members of a throwaway database
TARGETS = {"zip_in_vs_unzip_ratio": 2.0, "zip_out_vs_zip_ratio": 2.0, f"pane_refresh_ms_p99_members_{MEMBERS}": 2000}
REPORTED: list[dict] = []
WORDS = ["theorem", "lemma", "proof", "section", "figure", "table", "equation", "reference", "result", "method",
         "model", "data", "analysis", "sample", "value", "error", "bound", "estimate", "function", "space"]  # fmt: skip


def figure(name: str, per_rep: list[float], **fields) -> dict:
    line = report(name, per_rep, **fields)
    REPORTED.append(line)
    return line


def project_zip(rng: random.Random) -> bytes:
    """FILES files and MEGABYTES MB: sources in chapters, figures in figures/, zipped as a tool would."""
    sources, figures = FILES - FILES // 10, FILES // 10
    text_bytes = MEGABYTES * 1024 * 1024 * 36 // 100  # sources are the smaller share of the bytes
    per_source, per_figure = text_bytes // sources, (MEGABYTES * 1024 * 1024 - text_bytes) // max(figures, 1)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.tex", "\\documentclass{article}\n\\begin{document}\nBench.\n\\end{document}\n")
        for number in range(sources - 1):
            lines, size = [], 0
            while size < per_source:
                line = " ".join(rng.choices(WORDS, k=12)) + ".\n"
                lines.append(line)
                size += len(line)
            archive.writestr(f"chapters/part{number // 50:02d}/section{number:04d}.tex", "".join(lines))
        for number in range(figures):
            archive.writestr(f"figures/plot{number:04d}.png", rng.randbytes(per_figure))
    return buffer.getvalue()


def _request(url: str, token: str, *, method: str = "GET", data: bytes | None = None, headers=None):
    request = urllib.request.Request(url, data=data, method=method)  # noqa: S310  the bench's own server
    request.add_header("Authorization", f"Bearer {token}")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    return urllib.request.urlopen(request, timeout=600)  # noqa: S310


def _drained(response) -> int:
    total = 0
    while chunk := response.read(1024 * 1024):
        total += len(chunk)
    return total


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def zip_phase(url: str, token: str, data: bytes, directory: Path) -> None:
    label = f"{FILES}_files_{MEGABYTES}mb"
    ins, outs, unzips, zips = [], [], [], []
    warm = io.BytesIO()
    with zipfile.ZipFile(warm, "w") as archive:  # the servers' first upload and download, not measured
        archive.writestr("main.tex", "\\documentclass{article}\\begin{document}Warm.\\end{document}\n")
    for _ in range(2):
        with _request(f"{url}/v1/projects/archive?name=warm", token, method="POST", data=warm.getvalue(),
                      headers={"Content-Type": "application/zip"}) as response:  # fmt: skip
            warmed = json.loads(response.read())["project"]["id"]
        with _request(f"{url}/v1/projects/{warmed}/archive", token) as response:
            _drained(response)
    for repetition in range(BENCH_REPS):
        started = time.perf_counter()
        with _request(
            f"{url}/v1/projects/archive?name=bench{repetition}",
            token,
            method="POST",
            data=data,
            headers={"Content-Type": "application/zip"},
        ) as response:
            project = json.loads(response.read())["project"]
        ins.append(_ms(started))
        started = time.perf_counter()
        with _request(f"{url}/v1/projects/{project['id']}/archive", token) as response:
            size = _drained(response)
        outs.append(_ms(started))
        archive, unpacked = directory / "peer.zip", directory / f"unpacked-{repetition}"
        archive.write_bytes(data)
        started = time.perf_counter()
        subprocess.run(["unzip", "-q", str(archive), "-d", str(unpacked)], check=True)
        unzips.append(_ms(started))
        repacked = directory / f"repacked-{repetition}.zip"
        started = time.perf_counter()
        subprocess.run(["zip", "-r", "-q", str(repacked), "."], cwd=unpacked, check=True)
        zips.append(_ms(started))
        print(f"    zip out: {size / 1e6:.1f} MB from Quire, {repacked.stat().st_size / 1e6:.1f} MB from zip -r")
        shutil.rmtree(unpacked)
        repacked.unlink()
    config = f"{FILES} files, {MEGABYTES} MB over HTTP, 2 server processes"
    figure(f"zip_in_ms_{label}", ins, unit="ms", n=1, config=config)
    figure(f"unzip_ms_{label}", unzips, unit="ms", n=1, config="unzip -q, same zip")
    figure("zip_in_vs_unzip_ratio", [a / b for a, b in zip(ins, unzips, strict=True)], unit="x", n=1, config=config)
    figure(f"zip_out_ms_{label}", outs, unit="ms", n=1, config=config)
    figure(f"zip_ms_{label}", zips, unit="ms", n=1, config="zip -r -q of the unpacked directory")
    figure("zip_out_vs_zip_ratio", [a / b for a, b in zip(outs, zips, strict=True)], unit="x", n=1, config=config)


def big_pdf(megabytes: int) -> bytes:
    """A valid one-page PDF carrying ``megabytes`` MB in an unused stream, as a long scanned document would."""
    payload = random.Random(7).randbytes(megabytes * 1024 * 1024)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> /Contents 4 0 R >>",
        b"<< /Length 0 >>\nstream\n\nendstream",
        b"<< /Length " + str(len(payload)).encode() + b" >>\nstream\n" + payload + b"\nendstream",
    ]
    out, offsets = bytearray(b"%PDF-1.7\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def _static_server(directory: str, port_out) -> None:
    handler = partial(_QuietFiles, directory=directory)
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        port_out.put(server.server_address[1])
        server.serve_forever()


def pdf_phase(url: str, token: str, owner_id: int, directory: Path) -> None:
    """A 20 MB output published as a build's is (Workspace's storage), then downloaded BENCH_N times."""
    from django.db import transaction

    from workspace import facade as workspace
    from workspace import services

    data = big_pdf(PDF_MEGABYTES)
    project = services.project_create(actor_id=owner_id, name="bench pdf", project_type="latex", starter=True)
    digest = workspace.output_content_store(data=data)
    output = workspace.BuildOutput(
        uuid.uuid4(),
        LATEX,
        owner_id,
        project.generation,
        [],
        None,
        [],
        "",
        (workspace.OutputFile("pdf", "application/pdf", "main.pdf", len(data), digest),),
    )
    with transaction.atomic():
        workspace.output_publish(project_id=project.pk, output=output)
    (directory / "static").mkdir()
    (directory / "static" / "main.pdf").write_bytes(data)
    ports = multiprocessing.get_context("spawn").Queue()
    server = multiprocessing.get_context("spawn").Process(
        target=_static_server, args=(str(directory / "static"), ports)
    )
    server.start()
    static = f"http://127.0.0.1:{ports.get(timeout=30)}/main.pdf"
    n = n_or(20)
    for _ in range(2):  # both server processes' first download, not measured
        with _request(f"{url}/v1/projects/{project.pk}/output/pdf", token) as response:
            _drained(response)
    try:
        quire_p50, quire_p99, static_p50, ratios = [], [], [], []
        for _ in range(BENCH_REPS):
            quire, peer = [], []
            for _ in range(n):
                started = time.perf_counter()
                with _request(f"{url}/v1/projects/{project.pk}/output/pdf", token) as response:
                    assert _drained(response) == len(data)
                quire.append(_ms(started))
                started = time.perf_counter()
                with urllib.request.urlopen(static, timeout=60) as response:
                    assert _drained(response) == len(data)
                peer.append(_ms(started))
            quire_p50.append(percentile(quire, 0.5))
            quire_p99.append(percentile(quire, 0.99))
            static_p50.append(percentile(peer, 0.5))
            ratios.append(quire_p50[-1] / static_p50[-1])
    finally:
        server.terminate()
        server.join()
    config = f"{PDF_MEGABYTES} MB, {n} downloads in a row"
    figure(f"output_pdf_ms_p50_{PDF_MEGABYTES}mb", quire_p50, unit="ms", n=n, config=config)
    figure(f"output_pdf_ms_p99_{PDF_MEGABYTES}mb", quire_p99, unit="ms", n=n, config=config)
    figure(f"static_pdf_ms_p50_{PDF_MEGABYTES}mb", static_p50, unit="ms", n=n, config="python -m http.server")
    figure("output_pdf_vs_static_ratio", ratios, unit="x", n=n, config=config)


SHOWN = """() => new Promise((resolve) => {
    window.__shown = window.__shown || [];
    document.addEventListener("quire:pdf-shown", (event) => window.__shown.push(
        {url: event.detail.url, at: performance.timeOrigin + performance.now()}));
    resolve(true);
})"""


def pane_phase(url: str, token: str, owner, project_id) -> None:
    from django.contrib.auth import get_user_model
    from playwright.sync_api import sync_playwright

    from access.services import member_set

    members = []
    for index in range(MEMBERS):
        user = get_user_model().objects.create_user(
            username=f"member-{index}-{uuid.uuid4().hex[:6]}", password=PASSWORD
        )
        member_set(actor_id=owner.pk, project_id=project_id, username=user.username, role="editor")
        members.append(user)
    per_rep_p50, per_rep_p99, samples_all = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        pages = [_member_page(browser, url, user, project_id) for user in members]
        for _ in range(BENCH_REPS):
            samples = []
            for build in range(BUILDS):
                completed_at, job_id = _build(url, token, project_id, build)
                for page in pages:
                    seen = "(job) => (window.__shown || []).some((s) => s.url.endsWith(job))"
                    page.wait_for_function(seen, arg=job_id, timeout=60_000)
                    shown = page.evaluate("(job) => window.__shown.find((s) => s.url.endsWith(job)).at", job_id)
                    samples.append(shown - completed_at * 1000)
            per_rep_p50.append(percentile(samples, 0.5))
            per_rep_p99.append(percentile(samples, 0.99))
            samples_all += samples
        browser.close()
    config = f"{MEMBERS} members in Chromium, {BUILDS} builds a repetition, build finished → pane drawn"
    figure(f"pane_refresh_ms_p50_members_{MEMBERS}", per_rep_p50, unit="ms", n=MEMBERS * BUILDS, config=config)
    figure(f"pane_refresh_ms_p99_members_{MEMBERS}", per_rep_p99, unit="ms", n=MEMBERS * BUILDS, config=config)
    print(f"    all samples: mean {statistics.mean(samples_all):.0f} ms, max {max(samples_all):.0f} ms")


def _member_page(browser, url: str, user, project_id):
    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/")
    page.add_init_script(f"({SHOWN})()")
    page.goto(f"/projects/{project_id}/?file=main.tex")
    page.wait_for_selector(".live-editor-ready", timeout=30_000)
    return page


def _build(url: str, token: str, project_id, number: int) -> tuple[float, str]:
    """Change the paper (so nothing is reused) and build it; the build's end on the database's clock."""
    text = f"\\documentclass{{article}}\n\\begin{{document}}\nBuild {number} at {time.time_ns()}.\n\\end{{document}}\n"
    with _request(
        f"{url}/v1/projects/{project_id}/files/main.tex",
        token,
        method="PUT",
        data=text.encode(),
        headers={"Content-Type": "text/plain"},
    ):
        pass
    with _request(
        f"{url}/v1/projects/{project_id}/builds",
        token,
        method="POST",
        data=b"{}",
        headers={"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex},
    ) as response:
        job = json.loads(response.read())
    while job["state"] not in ("succeeded", "failed", "cancelled", "expired"):
        with _request(f"{url}/v1/processing/jobs/{job['id']}?wait=20", token) as response:
            job = json.loads(response.read())
    if job["state"] != "succeeded":
        raise RuntimeError(f"build {job['id']} {job['state']}: {job.get('failure')}")
    return datetime.fromisoformat(job["completed_at"]).timestamp(), job["id"]


def main() -> None:
    from scripts.bench.processes import agents, deployment_write, web_server

    started = time.perf_counter()
    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        os.environ["QUIRE_STORAGE_DIR"] = str(directory / "storage")
        deployment = deployment_write(directory, operations=[LATEX], limits={"lease_seconds": 60})
        os.environ["QUIRE_DEPLOYMENT_FILE"] = str(deployment)
        django_setup()
        from django.contrib.auth import get_user_model

        from access.services import token_create
        from workspace import services

        owner = get_user_model().objects.create_user(username=f"owner-{uuid.uuid4().hex[:6]}", password=PASSWORD)
        _, token = token_create(user_id=owner.pk, name="bench")
        env = {
            "QUIRE_STORAGE_DIR": str(directory / "storage"),
            "QUIRE_DEPLOYMENT_FILE": str(deployment),
            "QUIRE_LOG_LEVEL": "WARNING",
            "WORKSPACE_MAX_ARCHIVE_BYTES": str(256 * 1024 * 1024),
        }
        print(
            f"Project benchmark (2 server processes; machine load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        with web_server(env, workers=2, log=directory / "web.log") as url:
            if "zip" in PHASES:
                data = project_zip(random.Random(11))
                print(f"  zip in and out ({FILES} files, {len(data) / 1e6:.1f} MB zipped)")
                zip_phase(url, token, data, directory)
            if "pdf" in PHASES:
                print(f"  the output's PDF ({PDF_MEGABYTES} MB)")
                pdf_phase(url, token, owner.pk, directory)
            if "pane" in PHASES:
                print(f"  pane refresh ({MEMBERS} members)")
                paper = services.project_create(actor_id=owner.pk, name="paper", project_type="latex", starter=True)
                with agents(url, directory, count=1, slots=2, operations=LATEX):
                    pane_phase(url, token, owner, paper.pk)
    for line in REPORTED:
        if (target := TARGETS.get(line["figure"])) is not None:
            print(f"  target {line['figure']} <= {target}: {'met' if line['value'] <= target else 'MISSED'}")
    print(f"  [{time.perf_counter() - started:.0f} s in all]")


if __name__ == "__main__":
    main()
