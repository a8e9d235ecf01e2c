"""Warm starts: a build that starts from the previous build's auxiliary files runs only the passes its change
needs, and its PDF is the same bytes as a clean build of the same content; a warm start that cannot be used or
does not settle is built again from scratch."""

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from quire_worker.processors.latex.warm_start import (
    MAX_BYTES,
    MAX_FILES,
    WarmFiles,
    WarmStartKey,
    WarmStartRefused,
    warm_archive_read,
    warm_archive_write,
    warm_files_collect,
)
from quire_worker.processors.latex.work_area import WorkArea
from scripts.bench.author_paper import author_project
from tests.worker.bundles import STARTER_DOCUMENT, sha256_of
from workspace.starters import DEMO_PAPER

KEY = WarmStartKey("main.tex", "pdflatex", "quire-latex/3 test")

TWENTY_PAGES = "\n".join(
    [
        r"\documentclass[11pt]{article}",
        r"\begin{document}",
        r"\tableofcontents\newpage",
        *(
            f"\\section{{Part {n}}}\\label{{part:{n}}}\nSee Part~\\ref{{part:{21 - n}}}.\n\\newpage"
            for n in range(1, 20)
        ),
        r"\end{document}",
        "",
    ]
)
CHAPTERS_MAIN = r"""\documentclass{report}
\usepackage{natbib}
\begin{document}
\tableofcontents
\include{chapters/one}
\include{chapters/two}
\bibliographystyle{plainnat}
\bibliography{refs}
\end{document}
"""
CHAPTERS_BIB = "@book{knuth, author = {Donald Knuth}, title = {The TeXbook}, year = {1984}, publisher = {AW}}\n"


def chapters(word: str = "first", label: str = "ch:two") -> dict[str, str]:
    return {
        "main.tex": CHAPTERS_MAIN,
        "chapters/one.tex": f"\\chapter{{One}}\nThe {word} chapter, before~\\ref{{{label}}}; \\citet{{knuth}}.\n",
        "chapters/two.tex": f"\\chapter{{Two}}\\label{{{label}}}\nThe second chapter.\n",
        "refs.bib": CHAPTERS_BIB,
    }


def output_of(result, role):
    return next((output for output in result.outputs if output.role == role), None)


def report_of(result) -> dict:
    return json.loads(output_of(result, "report").path.read_text())


# Each case: the project before, the project after one edit, and what the edit changes.
CASES = {
    "paper-word": (author_project(), author_project(word="immutable")),
    "paper-label": (author_project(), author_project(label="sec:introduction")),
    "paper-citation": (author_project(), author_project(cite="key5")),
    "paper-contents": (author_project(), author_project(title="Why durable processing")),
    "demo-paper-label": (
        DEMO_PAPER,
        {**DEMO_PAPER, "main.tex": DEMO_PAPER["main.tex"].replace("sec:intro", "sec:why")},
    ),
    "demo-paper-citation": (
        DEMO_PAPER,
        {**DEMO_PAPER, "main.tex": DEMO_PAPER["main.tex"].replace(r"\cite{lamport1994}", r"\cite{knuth1984}")},
    ),
    "starter-word": ({"main.tex": STARTER_DOCUMENT}, {"main.tex": STARTER_DOCUMENT.replace("frozen", "pinned", 1)}),
    "twenty-pages-contents": (
        {"main.tex": TWENTY_PAGES},
        {"main.tex": TWENTY_PAGES.replace("Part 7}", "The seventh part}")},
    ),
    "chapters-label": (chapters(), chapters(label="chapter:second")),
    "chapters-word": (chapters(), chapters(word="opening")),
}


@pytest.fixture
def warm_copy(tmp_path):
    """``warm_copy(result)``: the warm start a build delivered, kept beside the job (the next build's input)."""

    def keep(result) -> Path:
        kept = tmp_path / f"warm-{len(list(tmp_path.glob('warm-*')))}.tar.gz"
        kept.write_bytes(output_of(result, "warm").path.read_bytes())
        return kept

    return keep


@pytest.fixture(scope="module")
def warm_starts_made() -> dict[str, bytes]:
    """The warm start each project's clean build delivered, by its files: several edits start from one."""
    return {}


@pytest.fixture
def warm_start_of(bundle, build, tmp_path, warm_starts_made):
    """``warm_start_of(files)``: the warm start a clean build of ``files`` delivers, as a file of this test."""

    def made(files: dict[str, str]) -> Path:
        key = json.dumps(files, sort_keys=True)
        if key not in warm_starts_made:
            bundle(files)
            warm_starts_made[key] = output_of(build(), "warm").path.read_bytes()
        kept = tmp_path / f"warm-{len(list(tmp_path.glob('warm-*')))}.tar.gz"
        kept.write_bytes(warm_starts_made[key])
        return kept

    return made


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_warm_build_after_an_edit_is_byte_identical_to_a_clean_build(bundle, build, warm_start_of, case):
    before, after = CASES[case]
    assert before != after
    warm = warm_start_of(before)
    bundle(after)

    warm_result = build(warm_start=warm)
    warm_start, warm_pdf = report_of(warm_result)["start"], sha256_of(output_of(warm_result, "pdf").path)
    clean_result = build()  # the same output directory: read the warm build's outputs before

    assert warm_start == "warm", [entry.message for entry in warm_result.diagnostics.entries]
    assert report_of(clean_result)["start"] == "clean"
    assert warm_pdf == sha256_of(output_of(clean_result, "pdf").path)


def test_a_one_word_edit_rebuilds_in_one_pass(bundle, build, warm_start_of):
    before, after = CASES["paper-word"]
    warm = warm_start_of(before)
    bundle(after)

    report = report_of(build(warm_start=warm))

    assert report["start"] == "warm"
    assert report["runs"] == ["pdflatex"]


def test_a_warm_start_that_fails_is_built_again_from_scratch(bundle, build, latex_processor, tmp_path):
    bundle({"main.tex": STARTER_DOCUMENT})
    poisoned = tmp_path / "poisoned.tar.gz"
    # An .aux TeX chokes on when \begin{document} reads it back: the warm pass fails, the clean one does not.
    warm_archive_write(
        poisoned,
        WarmFiles((("main.aux", b"\\relax\n\\undefinedcommand\n"),)),
        WarmStartKey("main.tex", "pdflatex", latex_processor.contract),
    )

    result = build(warm_start=poisoned)
    start, fallback_pdf = report_of(result)["start"], sha256_of(output_of(result, "pdf").path)

    assert start == "fallback"
    assert any("built again from scratch" in entry.message for entry in result.diagnostics.entries)
    assert fallback_pdf == sha256_of(output_of(build(), "pdf").path)


def test_a_warm_start_made_for_another_entry_or_compiler_is_not_used(bundle, build, warm_copy):
    bundle({"main.tex": STARTER_DOCUMENT}, compiler="xelatex")
    warm = warm_copy(build())
    bundle({"main.tex": STARTER_DOCUMENT})

    result = build(warm_start=warm)

    assert report_of(result)["start"] == "clean"
    assert any("made for another entry file, compiler" in entry.message for entry in result.diagnostics.entries)


# --- choosing and reading the files ---------------------------------------------------------------------------


def work_with(tmp_path: Path, files: dict[str, bytes]) -> WorkArea:
    area = WorkArea(root=tmp_path / "area", sources=tmp_path / "area" / "src", home=tmp_path / "area" / "home")
    for name, data in files.items():
        (area.sources / name).parent.mkdir(parents=True, exist_ok=True)
        (area.sources / name).write_bytes(data)
    return area


def test_only_auxiliary_files_of_the_build_are_kept(tmp_path):
    area = work_with(
        tmp_path,
        {
            "main.aux": b"a",
            "main.toc": b"t",
            "main.fdb_latexmk": b"f",
            "chapters/one.aux": b"c",
            "main.pdf": b"%PDF",
            "main.log": b"log",
            "main.tex": b"tex",
            "shipped.aux": b"the project's own",
        },
    )
    (area.sources / "linked.aux").symlink_to("/etc/passwd")

    warm = warm_files_collect(area, frozenset({"main.tex", "shipped.aux"}))

    assert [name for name, _ in warm.files] == ["chapters/one.aux", "main.aux", "main.fdb_latexmk", "main.toc"]


def test_files_beyond_the_bounds_leave_no_warm_start(tmp_path):
    too_many = work_with(tmp_path / "many", {f"part{n}.aux": b"x" for n in range(MAX_FILES + 1)})
    too_big = work_with(tmp_path / "big", {"main.aux": b"x" * (MAX_BYTES + 1)})

    assert warm_files_collect(too_many, frozenset()) is None
    assert warm_files_collect(too_big, frozenset()) is None


def test_an_archive_reads_back_as_written(tmp_path):
    files = WarmFiles((("chapters/one.aux", b"one"), ("main.aux", b"main")))
    warm_archive_write(tmp_path / "warm.tar.gz", files, KEY)

    assert warm_archive_read(tmp_path / "warm.tar.gz", KEY, frozenset({"main.tex"})) == files


def archive_of(tmp_path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], meta: dict | None = None) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        meta_bytes = json.dumps(meta if meta is not None else KEY.as_meta()).encode()
        for member in [("warm-start.json", meta_bytes), *members]:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
                continue
            info = tarfile.TarInfo(member[0])
            info.size = len(member[1])
            archive.addfile(info, io.BytesIO(member[1]))
    path = tmp_path / "crafted.tar.gz"
    path.write_bytes(gzip.compress(buffer.getvalue()))
    return path


def symlink_member(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    return info


@pytest.mark.parametrize(
    ("members", "meta", "why"),
    [
        ([("../outside.aux", b"x")], None, "may not"),
        ([("/etc/cron.d/x.aux", b"x")], None, "may not"),
        ([("main.tex", b"\\input{/etc/passwd}")], None, "may not"),  # a project file's path
        ([("script.sh", b"x")], None, "may not"),  # not an auxiliary file
        ([symlink_member("main.aux")], None, "something other than a file"),
        ([("main.aux", b"x")], {**KEY.as_meta(), "engine": "lualatex"}, "made for another"),
        ([("main.aux", b"x")], {}, "made for another"),
        ([(f"p{n}.aux", b"") for n in range(MAX_FILES + 1)], None, "too many files"),
    ],
    ids=["parent", "absolute", "project-file", "not-auxiliary", "symlink", "other-engine", "no-meta", "too-many"],
)
def test_an_archive_that_breaks_a_rule_is_refused(tmp_path, members, meta, why):
    path = archive_of(tmp_path, members, meta)

    with pytest.raises(WarmStartRefused, match=why):
        warm_archive_read(path, KEY, frozenset({"main.tex"}))


def test_an_archive_that_is_not_one_is_refused(tmp_path):
    (tmp_path / "junk.tar.gz").write_bytes(b"not a gzip at all")

    with pytest.raises(WarmStartRefused, match="not a readable archive"):
        warm_archive_read(tmp_path / "junk.tar.gz", KEY, frozenset())
