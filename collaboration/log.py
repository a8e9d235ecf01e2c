"""A document's Yjs state as stored: the log's snapshot plus the updates after it, and a cache of it.

Live editing stores every keystroke. Rebuilding the document from the log for each would replay up to
``SNAPSHOT_EVERY`` updates every time, so a server process keeps the documents it serves in a small
cache. A cached document is valid only for the log's ``last_seq`` it was built at: a writer checks that
under the log's row lock, a reader against the sequence it has just read, and either rebuilds on any
difference. The log in PostgreSQL stays the only authority; losing the cache loses nothing.

A cached document is *taken* while it is used and *put* back afterwards, so two threads never touch
the same ``Doc`` and a document left half-changed by a refused update is simply not put back.
"""

import hashlib
import threading
from collections import OrderedDict

from django.db import connection, transaction
from pycrdt import Doc

from collaboration.models import DocumentLog
from collaboration.ydoc import doc_build

SNAPSHOT_EVERY = 64
CACHED_DOCUMENTS = 256


def server_client_id(file_id: int) -> int:
    # A fixed id per document is safe because every server edit happens under the fence against the latest
    # state; it also makes the reconciling edit deterministic, so the state a client downloads matches what
    # is later stored.
    return int.from_bytes(hashlib.sha256(f"quire-server:{file_id}".encode()).digest()[:4], "big") >> 1


def log_doc(log: DocumentLog) -> Doc:
    """Rebuild the document from its snapshot and the updates after it."""
    updates: list[bytes] = []
    if log.pk:
        rows = log.updates.filter(seq__gt=log.snapshot_seq).order_by("seq").values_list("update", flat=True)
        updates = [bytes(update) for update in rows]
    return doc_build(bytes(log.snapshot), updates, client_id=server_client_id(log.file_id))


class DocumentCache:
    def __init__(self, capacity: int = CACHED_DOCUMENTS):
        self._capacity = capacity
        self._documents: OrderedDict[int, tuple[int, Doc]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, file_id: int, seq: int) -> Doc | None:
        """The cached document at exactly ``seq``, removed from the cache until it is put back."""
        taken = self.take_at_most(file_id, seq)
        if taken is None or taken[0] != seq:
            if taken is not None:
                self.put(file_id, *taken)
            return None
        return taken[1]

    def take_at_most(self, file_id: int, seq: int) -> tuple[int, Doc] | None:
        """The cached document and the sequence it is at, if that is no later than ``seq``; removed from the
        cache until it is put back."""
        with self._lock:
            cached = self._documents.get(file_id)
            if cached is None or cached[0] > seq:
                return None
            del self._documents[file_id]
        return cached

    def put(self, file_id: int, seq: int, doc: Doc) -> None:
        """Cache ``doc`` as the state at ``seq``, unless a later state is cached already."""
        with self._lock:
            cached = self._documents.get(file_id)
            if cached is not None and cached[0] > seq:
                return
            self._documents[file_id] = (seq, doc)
            self._documents.move_to_end(file_id)
            while len(self._documents) > self._capacity:
                self._documents.popitem(last=False)

    def drop(self, file_id: int) -> None:
        with self._lock:
            self._documents.pop(file_id, None)


documents = DocumentCache()


def log_doc_taken(log: DocumentLog) -> Doc:
    """The document at ``log.last_seq``: the cached state, brought forward by the updates stored since (another
    server process's, typically a few), or rebuilt when the cache holds nothing usable. Put it back
    (``documents.put``) once the transaction that used it committed."""
    cached = documents.take_at_most(log.file_id, log.last_seq)
    if cached is None:
        return log_doc(log)
    seq, doc = cached
    if seq < log.snapshot_seq:  # the updates in between may have been folded away
        return log_doc(log)
    if seq < log.last_seq:
        rows = log.updates.filter(seq__gt=seq, seq__lte=log.last_seq).order_by("seq").values_list("update", flat=True)
        for update in rows:
            doc.apply_update(bytes(update))
    return doc


def document_read_latest(file_id: int) -> tuple[DocumentLog | None, Doc]:
    """For a reader: the log (``None`` if there is none yet) and its document, without taking any lock.

    The log row and the updates after its snapshot are read in one repeatable-read snapshot, so the
    document is exactly the state at ``log.last_seq`` even while writers and compaction go on. Put the
    document back (``documents.put``) if it was not changed.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:  # inside a caller's transaction, its snapshot rules
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        log = DocumentLog.objects.defer("snapshot").filter(file_id=file_id).first()  # read only when rebuilding
        if log is None:
            return None, doc_build(b"", [], client_id=server_client_id(file_id))
        return log, log_doc_taken(log)
