"""LatexProcessor builds real projects with real TeX Live inside the bubblewrap sandbox."""

import re
import unicodedata
from pathlib import Path

import pytest

from processing.operations.latex_compile_pdf import LATEX_COMPILE_PDF
from quire_worker.contracts import Limits
from quire_worker.processors.latex.compile_pdf import LatexProcessor
from quire_worker.processors.latex.texlive import TexLive
from quire_worker.sandbox import LocalExecutor
from tests.worker.bundles import (
    STARTER_DOCUMENT,
    article,
    pdf_page_texts,
    pdf_text,
    sha256_of,
    tiny_png,
)

UNICODE_DOCUMENT = r"""\documentclass{article}
\usepackage{fontspec}
\begin{document}
Grüße, ÆØÅ, ĳ
\end{document}
"""


def output_of(result, role):
    return next(output for output in result.outputs if output.role == role)


def test_pdflatex_builds_the_starter_document(bundle, build):
    bundle({"main.tex": STARTER_DOCUMENT})

    result = build()

    text = pdf_text(output_of(result, "pdf").path)
    assert "A Quire project" in text
    assert "frozen snapshot of the project" in text


def test_outputs_are_the_pdf_log_synctex_and_report_named_after_the_entry(bundle, build):
    bundle({"paper.tex": STARTER_DOCUMENT}, entry_path="paper.tex")

    result = build()

    described = {(o.role, o.media_type, o.filename) for o in result.outputs}
    assert described == {
        ("pdf", "application/pdf", "paper.pdf"),
        ("log", "text/plain", "paper.log"),
        ("synctex", "application/gzip", "paper.synctex.gz"),
        ("report", "application/json", "paper.report.json"),
        ("warm", "application/gzip", "warm-start.tar.gz"),
    }
    assert "Output written on paper.pdf" in output_of(result, "log").path.read_text()


def test_every_output_is_a_role_the_operation_declares_within_its_limit(bundle, build):
    bundle({"main.tex": STARTER_DOCUMENT})

    result = build()

    for output in result.outputs:
        role = LATEX_COMPILE_PDF.role(output.role)
        assert role is not None and output.media_type in role.media_types
        assert output.path.stat().st_size <= role.max_bytes


@pytest.mark.parametrize("compiler", ["pdflatex", "xelatex", "lualatex"])
def test_the_same_bundle_builds_a_byte_identical_pdf_and_synctex(bundle, build, compiler):
    document = STARTER_DOCUMENT if compiler == "pdflatex" else UNICODE_DOCUMENT
    bundle({"main.tex": document}, compiler=compiler)

    first, second = build(), build()

    for role in ("pdf", "synctex", "report"):
        assert sha256_of(output_of(first, role).path) == sha256_of(output_of(second, role).path), role


def test_xelatex_keeps_unicode_text(bundle, build):
    bundle({"main.tex": UNICODE_DOCUMENT}, compiler="xelatex")

    result = build()

    assert "Grüße, ÆØÅ, ĳ" in pdf_text(output_of(result, "pdf").path)


def test_lualatex_keeps_unicode_text_up_to_compatibility_ligatures(bundle, build):
    bundle({"main.tex": UNICODE_DOCUMENT}, compiler="lualatex")

    result = build()

    # LuaTeX's font loader deliberately maps the ĳ glyph to its decomposition "ij" in the
    # PDF's ToUnicode table (ConTeXt's font-map overloads); the glyph drawn is still ĳ.
    assert unicodedata.normalize("NFKC", "Grüße, ÆØÅ, ĳ") in pdf_text(output_of(result, "pdf").path)


def test_a_subfile_in_a_folder_is_input(bundle, build):
    bundle(
        {
            "main.tex": article(r"\input{chapters/intro}"),
            "chapters/intro.tex": "Words from the introduction chapter.\n",
        }
    )

    result = build()

    assert "Words from the introduction chapter." in pdf_text(output_of(result, "pdf").path)


def test_a_png_asset_is_included(bundle, build):
    main = article(r"\includegraphics[width=2cm]{figures/dot.png}", preamble="\\usepackage{graphicx}\n")
    bundle({"main.tex": main, "figures/dot.png": tiny_png()})

    result = build()

    assert "<figures/dot.png" in output_of(result, "log").path.read_text()  # pdfTeX names embedded images
    assert b"/Subtype /Image" in output_of(result, "pdf").path.read_bytes()


def test_a_bibtex_bibliography_is_resolved(bundle, build):
    main = article(r"""As shown by \cite{knuth84}.
\bibliographystyle{plain}
\bibliography{refs}""")
    refs = "@book{knuth84, author={Donald E. Knuth}, title={The TeXbook}, publisher={Addison-Wesley}, year=1984}"
    bundle({"main.tex": main, "refs.bib": refs})

    result = build()

    text = pdf_text(output_of(result, "pdf").path)
    assert "As shown by [1]" in text
    assert "The TeXbook" in text


def test_a_biblatex_bibliography_is_resolved_by_biber(bundle, build):
    preamble = "\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}\n"
    main = article("As shown by \\cite{lamport94}.\n\\printbibliography", preamble=preamble)
    refs = "@book{lamport94, author={Leslie Lamport}, title={A Document Preparation System}, year=1994}"
    bundle({"main.tex": main, "refs.bib": refs})

    result = build()

    text = pdf_text(output_of(result, "pdf").path)
    assert "As shown by [1]" in text
    assert "A Document Preparation System" in text


def test_a_table_of_contents_is_complete_after_several_passes(bundle, build):
    sections = [f"\\section{{Part number {n}}}\nText.\\newpage" for n in ("one", "two", "three")]
    bundle({"main.tex": article("\n".join([r"\tableofcontents\newpage", *sections]))})

    result = build()

    contents_page, *_ = pdf_page_texts(output_of(result, "pdf").path)
    assert "1 Part number one 2" in contents_page
    assert "3 Part number three 4" in contents_page


def test_undefined_references_and_overfull_boxes_are_reported_with_their_file(bundle, build):
    main = article(r"""See section~\ref{nowhere}.

\hbox to 1cm{A box far too narrow for this text}""")
    bundle({"main.tex": main})

    entries = build().diagnostics.entries

    assert any(
        e.severity == "warning" and "`nowhere'" in e.message and (e.file, e.line) == ("main.tex", 3) for e in entries
    )
    assert any(
        e.severity == "warning" and e.message.startswith("Overfull \\hbox") and (e.file, e.line) == ("main.tex", 5)
        for e in entries
    )


def test_the_log_is_bounded_with_head_and_tail(bundle, build):
    chatter = "\n".join(f"\\message{{chatter line {n}}}" for n in range(2000))
    bundle({"main.tex": article(f"{chatter}\nDone.")})

    result = build(limits=Limits(wall_seconds=60, log_bytes=8192))

    log = output_of(result, "log").path.read_text()
    assert len(log.encode()) <= 8192
    assert log.startswith("This is pdfTeX")
    assert "bytes cut ...]" in log
    assert "Output written on main.pdf" in log


def test_a_local_build_as_root_leaves_the_system_texmf_tree_untouched(bundle, build):
    system_var = Path("/var/lib/texmf")
    before = sorted(system_var.rglob("*"))
    bundle({"main.tex": UNICODE_DOCUMENT}, compiler="lualatex")  # LuaTeX writes a font-name cache

    build(executor=LocalExecutor())

    assert sorted(system_var.rglob("*")) == before


def test_the_contract_names_the_processor_texlive_and_latexmk(latex_processor):
    assert re.fullmatch(r"quire-latex/3 texlive-20\d\d latexmk-\d+\.\d+ texcount-\d+(\.\d+)*", latex_processor.contract)
    assert latex_processor.unavailable_reason() is None


def test_a_worker_without_latexmk_says_so():
    texlive = TexLive(release="2022", banner="TeX Live 2022", latexmk_version=None, missing=("latexmk",))

    assert "latexmk" in LatexProcessor(texlive).unavailable_reason()


def test_a_latin1_source_builds_from_its_own_bytes(bundle, build):
    """A legacy-encoded file is stored byte for byte (tests/workspace/test_legacy_encodings.py) and builds as it
    did on its author's machine."""
    source = article(
        "Ärger über Öl in Köln, naïve café.", preamble="\\usepackage[T1]{fontenc}\n\\usepackage[latin1]{inputenc}\n"
    )
    bundle({"main.tex": source.encode("latin-1")})

    result = build()

    assert "Ärger über Öl in Köln, naïve café." in unicodedata.normalize("NFC", pdf_text(output_of(result, "pdf").path))
