"""`make bench-history`: a project's history at the size of a month of work.

The project: a LaTeX paper whose main.tex has 5,000 lines, three other files, and BENCH_N (default 100,000)
accepted Yjs updates by 5 authors over 30 simulated days. The updates are real: pycrdt editors, one per
author, each catching up with the server's state before a session of typing, type one character at a time at
a cursor that now and then moves elsewhere, and delete with Backspace; ``updates_accept`` stores them in
batches of 25 as live editing does, projections run every 100 updates and at a session's end, as the live
server's would. A session is 333 updates by one or two
authors; sessions are spread over 30 days (the journal's times are set before each fold, nothing sleeps), so
pauses make versions; every 20th session is labelled, every 7th renames or makes a file too.

Figures (the server is the real one, gunicorn + uvicorn, on the benchmark's own database; HTTP with a token):

- ``history_listing_ms_p50|p99``: ``GET /history`` (first page and pages further back), BENCH_N/500 requests
  per repetition (at least 40). Target p99 ≤ 200 ms.
- ``history_diff_ms_p50|p99``: ``GET /history/{a}/diff?against={b}&path=main.tex`` between random versions
  (the unified diff of the 5,000-line file). Target p99 ≤ 300 ms.
- ``history_diff_json_ms_p50|p99``: the same as the History panel asks for it (``Accept: application/json``:
  both texts, the counts, and who wrote each line of the later one, a blame over the versions between).
- ``history_restore_ms``: ``POST /history/{v}/restore`` of the whole project, alternately to two versions.
- ``document_open_ms_with_history`` / ``document_open_ms_compacted`` and their ratio
  ``document_open_with_history_vs_compacted_ratio``: rebuilding main.tex's Yjs document from its log (snapshot
  and tail, the cache dropped), for the history project after the maintenance loop's compaction and for the
  peer, a project holding the same text whose log was compacted as before history was kept. Target ≤ 1.2×.
- ``history_storage_bytes_per_10k_keystrokes`` and ``compacted_storage_bytes_per_10k_keystrokes``, and their
  ratio: what the document costs to keep (its log's rows, the texts and rows of its history) per 10,000
  accepted updates, against a compacted log and the current text alone.

Each figure is the median of BENCH_REPS (default 3) repetitions, with min–max. BENCH_N=2000 BENCH_REPS=1
runs in well under a minute; the default size takes about ten.
"""

import random
import statistics
import tempfile
import time
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report

AUTHORS = 5
DAYS = 30
UPDATES_PER_SESSION = 333
BATCH = 25
PROJECT_EVERY = 100
LINES = 5000
TARGETS = {
    "history_listing_ms_p99": 200,
    "history_diff_ms_p99": 300,
    "document_open_with_history_vs_compacted_ratio": 1.2,
}


def main() -> None:
    updates = n_or(100_000)
    with bench_database("quire_bench_history"), tempfile.TemporaryDirectory() as root:
        django_setup()
        from django.conf import settings

        settings.QUIRE_STORAGE_DIR = str(Path(root) / "storage")
        print(f"history: {updates} updates by {AUTHORS} authors over {DAYS} days, main.tex of {LINES} lines")
        started = time.perf_counter()
        world = _month_of_work(updates)
        print(f"  made in {time.perf_counter() - started:.0f} s: {world['versions']} versions")
        _measure(world, updates, Path(root))


def _paper() -> str:
    rng = random.Random(5)
    words = ["theorem", "lemma", "proof", "space", "measure", "group", "ring", "field", "basis", "vector"]
    body = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 12))) + "." for _ in range(LINES - 4)]
    return "\\documentclass{article}\n\\begin{document}\n" + "\n".join(body) + "\n\\end{document}\n"


def _month_of_work(updates: int) -> dict:
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from access import facade as access
    from collaboration import services as collaboration
    from collaboration.services.outcomes import Submitted
    from workspace import services
    from workspace.history import folding, labels
    from workspace.history.models import FileChange
    from workspace.models import Project, ProjectFile

    rng = random.Random(42)
    users = [get_user_model().objects.create_user(username=f"author{index}") for index in range(AUTHORS)]
    owner = users[0]
    project = services.project_create(actor_id=owner.pk, name="A month of work", project_type="latex")
    for user in users[1:]:
        access.member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role="editor")
    services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=_paper().encode())
    for path in ("refs.bib", "sections/intro.tex", "figures/plot.png"):
        services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=f"{path}\n".encode())
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    editors = {user.pk: None for user in users}
    sessions = max(1, updates // UPDATES_PER_SESSION)
    start = timezone.now() - timedelta(days=DAYS)
    sent = 0
    for session in range(sessions):
        typists = rng.sample(users, rng.choice((1, 1, 2)))
        count = UPDATES_PER_SESSION if session < sessions - 1 else updates - sent
        state = collaboration.state_read(actor_id=owner.pk, project_id=project.pk, path="main.tex")
        for user in typists:
            editors[user.pk] = _Editor(state)
        batch: list = []
        for index in range(count):
            user = typists[index % len(typists)]
            batch.append(Submitted(user.pk, editors[user.pk].keystroke(rng)))
            if len(batch) == BATCH:
                collaboration.updates_accept(project_id=project.pk, file_id=file_id, submitted=batch)
                batch = []
            if index % PROJECT_EVERY == PROJECT_EVERY - 1:
                collaboration.projection_flush(project_id=project.pk, file_id=file_id)
        if batch:
            collaboration.updates_accept(project_id=project.pk, file_id=file_id, submitted=batch)
        for user in typists:
            assert editors[user.pk].content == str(editors[user.pk].doc["content"]), "an editor lost its text"
            editors[user.pk].close()
        collaboration.projection_flush(project_id=project.pk, file_id=file_id)
        sent += count
        if session % 7 == 3:
            services.file_write(
                actor_id=typists[0].pk, project_id=project.pk, path=f"notes/day{session}.tex", data=b"notes\n"
            )
        at = start + timedelta(days=DAYS * session / sessions, minutes=rng.randint(0, 30))
        FileChange.objects.filter(project_id=project.pk).update(at=at)
        folding.history_fold(project_id=project.pk)
        if session % 20 == 19:
            labels.label_create(actor_id=owner.pk, project_id=project.pk, name=f"draft {session // 20 + 1}")
        if session % 100 == 0:
            print(f"  session {session + 1}/{sessions}", flush=True)
    collaboration.log_compact(file_id=file_id)  # as the maintenance loop does once typing stops
    versions = project.versions.count()
    token = _token_of(owner)
    return {"project": Project.objects.get(pk=project.pk), "file_id": file_id, "owner": owner, "token": token,
            "versions": versions}  # fmt: skip


class _Editor:
    """An author's editor for one session: a pycrdt document caught up with the server's, and its text as a
    string kept beside it (an editor's view has it; reading a month-old Y.Text whole for each keystroke would
    cost what no editor pays). Each keystroke's update is its transaction's own, as an editor sends it
    (``get_update(state)`` would carry the document's whole delete set every time)."""

    def __init__(self, state: bytes):
        from pycrdt import Doc, Text

        self.doc = Doc()
        self.doc["content"] = Text()
        self.doc.apply_update(state)
        self.content = str(self.doc["content"])
        self.cursor: int | None = None
        self.updates: list[bytes] = []
        self._subscription = self.doc.observe(lambda event: self.updates.append(event.update))

    def close(self) -> None:
        """Let the document go (its subscription would keep it, and a month of them, alive)."""
        self.doc.unobserve(self._subscription)

    def keystroke(self, rng: random.Random) -> bytes:
        """A keystroke as people type: at the cursor, which now and then moves somewhere else in the text;
        mostly a character typed, sometimes the one before the cursor deleted (Backspace)."""
        text, content = self.doc["content"], self.content
        if self.cursor is None or rng.random() < 0.03:
            self.cursor = rng.randrange(1, len(content))
        at = self.cursor
        if rng.random() < 0.2 and at > 1:
            del text[len(content[: at - 1].encode()) : len(content[:at].encode())]
            self.content, self.cursor = content[: at - 1] + content[at:], at - 1
        else:
            typed = rng.choice("etaoin shrdlu ß")
            text.insert(len(content[:at].encode()), typed)
            self.content, self.cursor = content[:at] + typed + content[at:], at + 1
        return self.updates.pop()


def _token_of(user) -> str:
    from access.services import token_create

    return token_create(user_id=user.pk, name="bench")[1]


def _measure(world: dict, updates: int, root: Path) -> None:
    import requests

    from scripts.bench.processes import web_server

    project, token = world["project"], world["token"]
    base = f"/v1/projects/{project.pk}"
    requests_per_rep = max(40, updates // 500)
    listing, diffs, panel_diffs, restores = [], [], [], []
    with web_server({"QUIRE_STORAGE_DIR": str(root / "storage")}, log=root / "server.log") as url:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {token}"
        numbers = [version["id"] for version in _all_versions(session, url + base)]
        befores = [None] + [numbers[index] for index in range(50, len(numbers), 50)]
        rng = random.Random(7)
        _timed(session.get, url + base + "/history")  # warm-up
        for _ in range(BENCH_REPS):
            samples = []
            for index in range(requests_per_rep):
                before = befores[index % len(befores)]
                samples.append(
                    _timed(session.get, url + base + "/history", params={"before": before} if before else {})
                )
            listing.append(samples)
            samples = []
            for _ in range(requests_per_rep):
                first, second = sorted(rng.sample(numbers, 2))
                samples.append(
                    _timed(
                        session.get, f"{url}{base}/history/{first}/diff", params={"against": second, "path": "main.tex"}
                    )
                )
            diffs.append(samples)
            samples = []
            for _ in range(requests_per_rep):  # as the History panel asks: JSON, with who wrote each line
                first, second = sorted(rng.sample(numbers, 2))
                params = {"against": second, "path": "main.tex"}
                headers = {"Accept": "application/json"}
                samples.append(_timed(session.get, f"{url}{base}/history/{first}/diff", params=params, headers=headers))
            panel_diffs.append(samples)
            targets = (numbers[len(numbers) // 3], numbers[len(numbers) // 2])
            restores.append(statistics.median(_timed(session.post, f"{url}{base}/history/{target}/restore", json={})
                                              for target in targets * 2))  # fmt: skip
    n = requests_per_rep
    config = f"{updates} updates, {world['versions']} versions, HTTP, 2 server processes"
    for name, per_rep in (
        ("history_listing_ms", listing),
        ("history_diff_ms", diffs),
        ("history_diff_json_ms", panel_diffs),
    ):
        report(f"{name}_p50", [percentile(samples, 0.5) for samples in per_rep], unit="ms", n=n, config=config)
        report(f"{name}_p99", [percentile(samples, 0.99) for samples in per_rep], unit="ms", n=n, config=config)
    report("history_restore_ms", restores, unit="ms", n=4, config=config + ", whole project")
    _open_and_storage(world, updates)
    print("targets: " + ", ".join(f"{figure} ≤ {value}" for figure, value in TARGETS.items()))


def _all_versions(session, url: str) -> list[dict]:
    versions, before = [], None
    while True:
        page = session.get(url + "/history", params={"before": before} if before else {}, timeout=30).json()
        versions += page["versions"]
        if page["next"] is None:
            return versions
        before = page["next"]


def _timed(call, url: str, **kwargs) -> float:
    started = time.perf_counter()
    response = call(url, timeout=60, **kwargs)
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:300]}")
    return elapsed


def _open_and_storage(world: dict, updates: int) -> None:
    from collaboration import services as collaboration
    from collaboration.log import log_doc
    from collaboration.models import AcceptedUpdate, DocumentLog
    from workspace import services
    from workspace.models import ProjectFile

    owner, file_id = world["owner"], world["file_id"]
    text = ProjectFile.objects.get(pk=file_id)
    collaboration.log_compact(file_id=file_id)
    # The peer: the same document as compaction left it before history was kept (one snapshot, no rows),
    # in a project without history, so any cost history adds to opening shows as the difference.
    peer = services.project_create(actor_id=owner.pk, name="Compacted peer", project_type="latex")
    services.file_write(actor_id=owner.pk, project_id=peer.pk, path="main.tex", data=b"")
    peer_file = ProjectFile.objects.get(project=peer, path="main.tex").pk
    mine = DocumentLog.objects.get(file_id=file_id)
    DocumentLog.objects.create(
        project_id=peer.pk, file_id=peer_file, snapshot=bytes(mine.snapshot), snapshot_seq=mine.last_seq,
        last_seq=mine.last_seq, projected_seq=mine.last_seq,
    )  # fmt: skip
    config = f"main.tex of {LINES} lines, cache dropped, snapshot + tail"
    with_history, compacted = [], []
    for _ in range(BENCH_REPS):
        with_history.append(_open_ms(log_doc, DocumentLog.objects.get(file_id=file_id)))
        compacted.append(_open_ms(log_doc, DocumentLog.objects.get(file_id=peer_file)))
    report("document_open_ms_with_history", with_history, unit="ms", n=20, config=config)
    report("document_open_ms_compacted", compacted, unit="ms", n=20, config=config)
    ratios = [mine / theirs for mine, theirs in zip(with_history, compacted, strict=True)]
    report("document_open_with_history_vs_compacted_ratio", ratios, unit="x", n=20, config=config)

    kept = _history_bytes(world["project"].pk, file_id) + _log_bytes(file_id)
    plain = _log_bytes(peer_file) + _text_bytes([text.sha256])
    per = 10_000 / updates
    assert not AcceptedUpdate.objects.filter(log__file_id=file_id).exists()
    report("history_storage_bytes_per_10k_keystrokes", [kept * per], unit="bytes", n=updates, config="history kept")
    report("compacted_storage_bytes_per_10k_keystrokes", [plain * per], unit="bytes", n=updates, config="compacted")
    report("history_vs_compacted_storage_ratio", [kept / plain], unit="x", n=updates, config="bytes kept")


def _open_ms(build, log) -> float:
    samples = []
    for _ in range(20):
        started = time.perf_counter()
        build(log)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _query_one(sql: str, params: list) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.fetchone()[0] or 0)


def _log_bytes(file_id: int) -> int:
    log = _query_one(
        "SELECT sum(pg_column_size(log.*)) FROM collaboration_documentlog log WHERE file_id = %s", [file_id]
    )
    rows = _query_one(
        "SELECT sum(pg_column_size(u.*)) FROM collaboration_acceptedupdate u JOIN collaboration_documentlog log "
        "ON log.id = u.log_id WHERE log.file_id = %s",
        [file_id],
    )
    return log + rows


def _text_bytes(digests: list[str]) -> int:
    return _query_one("SELECT sum(pg_column_size(t.*)) FROM workspace_textcontent t WHERE sha256 = ANY(%s)", [digests])


def _history_bytes(project_id, file_id: int) -> int:
    """The document's history: its versions' rows and every text of it they keep (the current one among them)."""
    rows = _query_one(
        "SELECT (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM workspace_version v WHERE v.project_id = %s) + "
        "(SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM workspace_versionchange c WHERE c.file_id = %s)",
        [project_id, file_id],
    )
    texts = _query_one(
        "SELECT sum(pg_column_size(t.*)) FROM workspace_textcontent t WHERE t.sha256 IN "
        "(SELECT sha_after FROM workspace_versionchange WHERE file_id = %s)",
        [file_id],
    )
    return rows + texts


if __name__ == "__main__":
    main()
