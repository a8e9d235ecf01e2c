"""Typst builds for `make bench-latex`: the full path against the Typst processor alone (``typst.compile.pdf/v1``).

Documents: the Typst starter (``demo``, what every new Typst project starts from) and a 20-page document
(an outline on page 1, then 19 sections of a page each). How the two sides are made comparable: see
``scripts.bench.builds``; the raw side is the processor the agent runs, i.e. ``typst.compile`` and the
word count in its sandboxed child (``typst_pdf_child``) plus the orchestrator's checks, in bubblewrap.
Figures: ``typst_raw_ms_p50_<doc>``, ``typst_full_ms_p50_<doc>``, ``typst_overhead_ms_p50_<doc>``
(target ≤ 150 ms, as LaTeX's), ``typst_full_vs_raw_ratio_<doc>`` and ``typst_phase_ms_p50_<phase>_<doc>``.
"""

from scripts.bench.builds import RawSide, paired_builds, report_paired
from scripts.bench_latex_raw import PARAGRAPH
from workspace.starters import TYPST_MAIN


def typst_edit(source: str, tag: str) -> str:
    """The source with a comment of its own at the top: never a reuse hit, the same document."""
    return f"// build {tag}\n{source}"


def typst_twenty_page_document() -> str:
    """An outline on page 1, then 19 sections of a page each: 20 pages in all (as LaTeX's 20-page document)."""
    sections = [f"= Section {number}\n{PARAGRAPH}\n\n{PARAGRAPH}\n" for number in range(1, 20)]
    head = '#set page(paper: "a4")\n#set text(size: 11pt)\n#outline()\n#pagebreak()\n'
    return head + "#pagebreak()\n".join(sections)


DOCUMENTS = (("demo", "Typst starter", TYPST_MAIN), ("20_pages", "20 Typst pages with an outline",
                                                        typst_twenty_page_document()))  # fmt: skip


def typst_builds(client, user, raw_side: RawSide, n: int) -> list[dict]:
    """Measure and report both documents; the overhead lines."""
    lines = []
    for name, label, source in DOCUMENTS:
        paired = paired_builds(client, user, raw_side, project_type="typst", source=source, edit=typst_edit, n=n)
        lines.append(report_paired("typst", name, label, paired, n))
    return lines
