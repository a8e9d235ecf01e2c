"""History of live editing: what a version holds is what replaying the log to its end gives, for any edits by any
authors, and it outlives the log's compaction."""

from random import Random

import pytest
from pycrdt import Doc, Text

from collaboration import services
from collaboration.log import doc_build
from collaboration.models import AcceptedUpdate, DocumentLog
from collaboration.services.outcomes import Submitted
from tests.factories import UserFactory
from workspace.history import labels, reading
from workspace.history.models import FileChange, Version
from workspace.models import ProjectFile

pytestmark = pytest.mark.django_db

ALPHABET = "abc xyz\n\\{}éß😀"


def _client_of(state: bytes) -> Doc:
    doc = Doc()
    doc["content"] = Text()
    doc.apply_update(state)
    return doc


def _server_state(file_id: int) -> bytes:
    log = DocumentLog.objects.filter(file_id=file_id).first()
    rows = AcceptedUpdate.objects.filter(log__file_id=file_id).order_by("seq").values_list("update", flat=True)
    return doc_build(bytes(log.snapshot) if log else b"", [bytes(row) for row in rows]).get_update()


def _random_edit(rng: Random, doc: Doc) -> bytes:
    text: Text = doc["content"]
    before = doc.get_state()
    length = len(str(text))
    if length and rng.random() < 0.35:
        start = rng.randrange(length)
        end = min(length, start + rng.randint(1, 12))
        chars = str(text)
        del text[len(chars[:start].encode()) : len(chars[:end].encode())]
    else:
        at = len(str(text)[: rng.randint(0, length)].encode())
        text.insert(at, "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8))))
    return doc.get_update(before)


def _replayed(file_id: int, through_seq: int) -> str:
    rows = AcceptedUpdate.objects.filter(log__file_id=file_id, seq__lte=through_seq).order_by("seq")
    return str(doc_build(b"", [bytes(update) for update in rows.values_list("update", flat=True)])["content"])


@pytest.mark.parametrize("seed", range(6))
def test_a_versions_file_is_the_log_replayed_to_its_end(seed, owner, project, settings):
    settings.QUIRE_HISTORY_GAP_SECONDS = 300
    rng = Random(seed)
    authors = [owner, UserFactory(), UserFactory()]
    from access import facade as access

    for author in authors[1:]:
        access.member_set(actor_id=owner.pk, project_id=project.pk, username=author.username, role="editor")
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    clients = {author.pk: _client_of(_server_state(file_id)) for author in authors}
    labelled: list[tuple[int, int]] = []  # (version, the log's last sequence number when it was labelled)

    for step in range(50):
        author = rng.choice(authors)
        if rng.random() < 0.5:  # this author's editor catches up with everyone's edits
            clients[author.pk].apply_update(_server_state(file_id))
        update = _random_edit(rng, clients[author.pk])
        services.updates_accept(project_id=project.pk, file_id=file_id, submitted=[Submitted(author.pk, update)])
        if rng.random() < 0.3:  # typing paused: the text is projected
            services.projection_flush(project_id=project.pk, file_id=file_id)
        if rng.random() < 0.1:  # a longer pause: the next change starts a new version
            services.projection_flush(project_id=project.pk, file_id=file_id)
            reading.history_brought_up_to_date(project_id=project.pk)
            _everything_happened_earlier(seconds=600)
        if rng.random() < 0.15 or step == 49:
            label = labels.label_create(actor_id=owner.pk, project_id=project.pk, name=f"step {step}")
            labelled.append((label.version.number, DocumentLog.objects.get(file_id=file_id).last_seq))

    last_seq = DocumentLog.objects.get(file_id=file_id).last_seq
    replays = [_replayed(file_id, seq) for seq in range(last_seq + 1)]
    versions = list(Version.objects.filter(project_id=project.pk).order_by("number"))
    assert len(versions) > 2

    def version_texts() -> dict[int, str]:
        return {
            version.number: reading.file_at(project_id=project.pk, number=version.number, path="main.tex")[1].decode()
            for version in versions
        }

    texts = version_texts()
    for number, seq in labelled:
        assert texts[number] == replays[seq]
    seqs = [replays.index(texts[version.number]) for version in versions]  # each version is one state of the log,
    assert seqs == sorted(seqs)  # and they follow one another in the log's order

    services.log_compact(file_id=file_id)  # the log folded into its snapshot: history keeps every version
    assert not AcceptedUpdate.objects.filter(log__file_id=file_id).exists()
    assert version_texts() == texts


def _everything_happened_earlier(seconds: int) -> None:
    from datetime import timedelta

    from django.db.models import F

    earlier = timedelta(seconds=seconds)
    FileChange.objects.update(at=F("at") - earlier)
    Version.objects.update(started_at=F("started_at") - earlier, ended_at=F("ended_at") - earlier)


def test_each_live_author_is_an_author_of_the_version(owner, project):
    coauthor = UserFactory()
    from access import facade as access

    access.member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    client = _client_of(_server_state(file_id))
    update = _random_edit(Random(1), client)
    services.updates_accept(project_id=project.pk, file_id=file_id, submitted=[Submitted(coauthor.pk, update)])
    services.projection_flush(project_id=project.pk, file_id=file_id)

    newest = reading.history_brought_up_to_date(project_id=project.pk)

    assert coauthor.pk in newest.authors
