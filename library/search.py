"""Full-text search over the library's current searchable versions (PostgreSQL ``tsvector`` + GIN).

Queries are parsed by ``websearch_to_tsquery``, which accepts any text (quotes,
``or``, ``-`` and stray operators never raise a syntax error); what it cannot
take — empty, overlong, control characters — is refused here with a 400.
Snippets come from ``ts_headline`` with control characters as highlight
markers (the indexer strips them from page text), so the snippet can be split
into plain and highlighted segments without trusting any markup in the PDF.
"""

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.utils.html import escape

from library.exceptions import SearchQueryInvalid

MAX_QUERY_CHARS = 500
MAX_HITS = 50
START, STOP = "\x02", "\x03"
_HEADLINE_OPTIONS = 'StartSel=\x02, StopSel=\x03, MaxWords=35, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "'

_SEARCH_SQL = """
    WITH query AS (SELECT websearch_to_tsquery(%(config)s::regconfig, %(q)s) AS q),
    hits AS (
        SELECT page.document_id, page.version_id, page.page_number, page.text,
               ts_rank_cd(page.search_vector, query.q) AS rank
        FROM workspace_librarypage AS page
        JOIN workspace_librarydocument AS document
          ON document.searchable_version_id = page.version_id
        CROSS JOIN query
        WHERE document.project_id = %(project)s AND page.search_vector @@ query.q
        ORDER BY rank DESC, page.document_id, page.page_number
        LIMIT %(limit)s
    )
    SELECT hits.document_id, document.title, hits.version_id, version.number, hits.page_number, hits.rank,
           ts_headline(%(config)s::regconfig, hits.text, query.q, %(options)s)
    FROM hits
    JOIN workspace_librarydocument AS document ON document.id = hits.document_id
    JOIN workspace_libraryversion AS version ON version.id = hits.version_id
    CROSS JOIN query
    ORDER BY hits.rank DESC, hits.document_id, hits.page_number
"""


def search_config() -> str:
    """The PostgreSQL text-search configuration pages are indexed and queries parsed with."""
    return settings.LIBRARY_SEARCH_CONFIG


@dataclass(frozen=True)
class SearchHit:
    document_id: uuid.UUID
    title: str
    version_id: uuid.UUID
    version_number: int
    page_number: int
    rank: float
    snippet: str
    snippet_html: str


def query_clean(raw: str | None) -> str:
    """The query as searched, or SearchQueryInvalid (empty, too long, control characters)."""
    query = (raw or "").strip()
    if not query:
        raise SearchQueryInvalid("Say what to search for with ?q=.", details={"reason": "empty"})
    if len(query) > MAX_QUERY_CHARS:
        raise SearchQueryInvalid(
            f"A search query is at most {MAX_QUERY_CHARS} characters.",
            details={"reason": "too_long", "max_length": MAX_QUERY_CHARS},
        )
    if any(ord(char) < 0x20 and char not in "\t\n\r" for char in query):
        raise SearchQueryInvalid("A search query cannot contain control characters.", details={"reason": "control"})
    return query


def snippet_segments(headline: str) -> list[tuple[str, bool]]:
    """Split a headline into (text, highlighted) segments."""
    segments = []
    for index, part in enumerate(headline.split(START)):
        if index == 0:
            segments.append((part, False))
            continue
        marked, _, rest = part.partition(STOP)
        segments += [(marked, True), (rest, False)]
    return [(text, marked) for text, marked in segments if text]


def _hit(row) -> SearchHit:
    document_id, title, version_id, number, page, rank, headline = row
    segments = snippet_segments(" ".join(headline.split()))
    snippet = "".join(text for text, _ in segments)
    html = "".join(f"<mark>{escape(text)}</mark>" if marked else str(escape(text)) for text, marked in segments)
    return SearchHit(document_id, title, version_id, number, page, float(rank), snippet, html)


def library_search(*, project_id: uuid.UUID, query: str, limit: int = 20) -> list[SearchHit]:
    """Hits (best first) among the pages of each document's current searchable version only."""
    params = {
        "config": search_config(),
        "q": query_clean(query),
        "project": project_id,
        "limit": max(1, min(limit, MAX_HITS)),
        "options": _HEADLINE_OPTIONS,
    }
    with connection.cursor() as cursor:
        cursor.execute(_SEARCH_SQL, params)
        return [_hit(row) for row in cursor.fetchall()]
