"""``latex.compile.pdf/v1``: build a LaTeX project bundle into a PDF with TeX Live's latexmk.

The build is reproducible: the same bundle gives a byte-identical PDF with every engine.
``SOURCE_DATE_EPOCH`` (the bundle's source epoch) with ``FORCE_SOURCE_DATE=1`` fixes every
date the engines write; pdfTeX and xdvipdfmx derive the trailer /ID from that date and the
job name. LuaTeX also hashes the absolute output path into /ID, and each build has its own
work directory, so for LuaLaTeX the /ID is set from the bundle's manifest digest instead.

A failing build reports every error of its run: TeX runs in nonstopmode without
``-halt-on-error``, so it goes on after an error (up to its own 100 errors in a paragraph, and
within the job's time and size limits) and logs each one. latexmk stops at a pass that had
errors (no reruns, no BibTeX/Biber, even with ``-f``), so a failed build costs one pass; the
warnings only those reruns would settle are left out of its diagnostics (``latex_diagnostics``).

Besides the PDF and the log a build delivers SyncTeX data (``latex_synctex``: made
reproducible, naming project files by their project path) and, when texcount can count them,
the document's words (``texcount``).
"""

import re
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from quire_worker.contracts import (
    CompletedRun,
    Executor,
    ExecutorError,
    FailureClass,
    Limits,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.latex.failures import BuildEvidence, classify_build
from quire_worker.processors.latex.log import BuildLog, read_build_log
from quire_worker.processors.latex.outputs import FinishedBuild, WarmDelivery, WordCounting, deliver
from quire_worker.processors.latex.texcount import WordCountBeside
from quire_worker.processors.latex.texlive import TexLive, detect_texlive
from quire_worker.processors.latex.warm_start import (
    WarmFiles,
    WarmStartKey,
    WarmStartRefused,
    warm_archive_read,
    warm_files_collect,
    warm_files_place,
)
from quire_worker.processors.latex.work_area import WorkArea, largest_file_bytes, source_file_bytes, work_area
from quire_worker.processors.project_bundle import ProjectBundle, read_project_bundle

OPERATION = "latex.compile.pdf/v1"
# 2: every error of the run, SyncTeX and word count outputs (results of /1 lack them: no reuse).
# 3: the warm-start result (``warm``) and the report's ``start``; the PDF is unchanged.
PROCESSOR_VERSION = "quire-latex/3"
# latexmk's switch for each engine, and the programs that engine needs.
ENGINES = {
    "pdflatex": ("-pdf", ("pdflatex",)),
    "xelatex": ("-pdfxe", ("xelatex", "xdvipdfmx")),
    "lualatex": ("-pdflua", ("lualatex",)),
}
DEFAULT_ENGINE = "pdflatex"
LATEXMK_OPTIONS = (
    "-norc",  # no latexmkrc from the system or the project; BibTeX/Biber still run when needed
    "-interaction=nonstopmode",  # go on after an error, so that the log has all of them
    "-file-line-error",
    "-no-shell-escape",
    "-synctex=1",  # gzipped SyncTeX; it changes nothing in the PDF
)
# What a last pass says when the auxiliary files it read were not yet the ones it wrote: a warm build that ends
# so has not reached the fixed point a clean build converges to, and is built again from scratch.
UNSETTLED = re.compile(r"Rerun to get|Label\(s\) may have changed|Please \(?re\)?run")
# latexmk's line for each tool it starts: "Running 'pdflatex  -interaction=…'".
RUN_LINE = re.compile(r"^Running '(\S+)", re.MULTILINE)
# Files of the build's own making that a project might ship: never mistake one for output.
GENERATED_SUFFIXES = (".pdf", ".log", ".synctex.gz", ".synctex")


class LatexProcessor:
    operation = OPERATION

    def __init__(self, texlive: TexLive | None = None):
        self.texlive = texlive or detect_texlive()
        self.contract = f"{PROCESSOR_VERSION} texlive-{self.texlive.release} latexmk-{self.texlive.latexmk_version}"
        if self.texlive.texcount_version is not None:
            self.contract += f" texcount-{self.texlive.texcount_version}"
        self.runtime_version = f"{self.texlive.banner}, latexmk {self.texlive.latexmk_version}"

    def unavailable_reason(self) -> str | None:
        return self.texlive.unavailable_reason

    def run(
        self,
        *,
        input_dir: Path,
        output_dir: Path,
        request: dict,
        limits: Limits,
        cancel: threading.Event,
        executor: Executor,
    ) -> ProcessorResult:
        """Build the bundle's entry file into ``output_dir``; ProcessorFailure classifies every failure.

        The compiler is a project setting frozen in the manifest; ``request["warm_start"]``, set by the agent,
        is the path of the claim's warm start when it has one.
        """
        bundle = read_project_bundle(input_dir, project_type="latex")
        engine = self._engine_for(bundle)
        project_paths = frozenset(bundle.file_paths)
        key = WarmStartKey(bundle.entry_path, engine, self.contract)
        warm, refusal = _warm_files(request.get("warm_start"), key, project_paths)
        build = _Build(bundle, engine, limits, cancel, executor, key)
        if warm is None:
            return self._deliver(build, output_dir, start="clean", notes=refusal)
        try:
            return self._deliver(build, output_dir, start="warm", warm=warm)
        except ProcessorFailure as failure:
            if cancel.is_set():
                raise
            reason = f"the warm start did not build ({failure.code}); built again from scratch"
        except _WarmNotSettled as unsettled:
            reason = f"the warm start did not settle ({unsettled}); built again from scratch"
        return self._deliver(build, output_dir, start="fallback", notes=(reason,))

    def _deliver(
        self,
        build: "_Build",
        output_dir: Path,
        *,
        start: str,
        warm: WarmFiles | None = None,
        notes: tuple[str, ...] = (),
    ) -> ProcessorResult:
        bundle = build.bundle
        jobname = PurePosixPath(bundle.entry_path).stem
        counting = WordCounting(self.texlive.texcount_version, self._count_beside(build, output_dir))
        try:
            with work_area(next_to=output_dir) as work:
                bundle.copy_files_to(work.sources)
                for suffix in GENERATED_SUFFIXES:
                    (work.sources / f"{jobname}{suffix}").unlink(missing_ok=True)
                if warm is not None:
                    warm_files_place(work, warm)
                limits, cancel, executor = build.limits, build.cancel, build.executor
                run = _compile(work, bundle, build.engine, limits=limits, cancel=cancel, executor=executor)
                build_log = read_build_log(work, jobname, run, build.limits, bundle.file_paths)
                failure = classify_build(_evidence(run, build_log, work, jobname), build.limits)
                if failure is not None:
                    raise failure
                if warm is not None and UNSETTLED.search(build_log.parsed_text):
                    raise _WarmNotSettled("the last pass still asks for another")
                finished = FinishedBuild(work, bundle.entry_path, jobname, build_log)
                warm_next = warm_files_collect(work, frozenset(bundle.file_paths))
                warm_delivery = WarmDelivery(start, warm_next, build.key, notes, runs=_runs(run))
                return deliver(finished, output_dir, build.limits, counting, warm_delivery)
        finally:
            if counting.beside is not None:
                counting.beside.result()  # its work area is below the job's, which goes once this returns

    def _count_beside(self, build: "_Build", output_dir: Path) -> WordCountBeside | None:
        if self.texlive.texcount_version is None:
            return None
        return WordCountBeside(
            copy_sources=build.bundle.copy_files_to,
            entry_path=build.bundle.entry_path,
            executor=build.executor,
            limits=build.limits,
            cancel=build.cancel,
            next_to=output_dir,
        )

    def _engine_for(self, bundle: ProjectBundle) -> str:
        engine = bundle.settings.get("compiler") or DEFAULT_ENGINE
        if engine not in ENGINES:
            raise ProcessorFailure(
                FailureClass.INVALID_INPUT, "unsupported_compiler", f"unknown LaTeX compiler {engine!r}"
            )
        absent = [program for program in ENGINES[engine][1] if not self.texlive.has(program)]
        if absent:
            message = f"{engine} needs {', '.join(absent)}, which this worker lacks"
            raise ProcessorFailure(FailureClass.UNSUPPORTED_DEPENDENCY, "missing_engine", message)
        return engine


@dataclass(frozen=True)
class _Build:
    bundle: ProjectBundle
    engine: str
    limits: Limits
    cancel: threading.Event
    executor: Executor
    key: WarmStartKey


class _WarmNotSettled(Exception):
    """A warm build that ended without the fixed point a clean build reaches: its PDF may differ."""


def _warm_files(path: str | None, key: WarmStartKey, project_paths: frozenset[str]):
    """The warm start's files, or None and why not (nothing to say when the job brought none)."""
    if not path:
        return None, ()
    try:
        return warm_archive_read(Path(path), key, project_paths), ()
    except WarmStartRefused as refusal:
        return None, (f"built from scratch: {refusal}",)


def _runs(run: CompletedRun) -> tuple[str, ...]:
    """The tools latexmk ran, in order (``pdflatex``, ``biber``…): how much the build had to do."""
    return tuple(RUN_LINE.findall(run.stdout.decode(errors="replace")))


def _compile(
    work: WorkArea,
    bundle: ProjectBundle,
    engine: str,
    *,
    limits: Limits,
    cancel: threading.Event,
    executor: Executor,
) -> CompletedRun:
    try:
        return executor.run(
            latexmk_argv(bundle, engine),
            cwd=work.sources,
            writable=[work.root],
            readable=[],
            env=build_environment(work, bundle),
            limits=limits,
            cancel=cancel,
        )
    except ExecutorError as exc:
        failure_class = FailureClass.TRANSIENT_INFRASTRUCTURE
        raise ProcessorFailure(failure_class, "sandbox_unavailable", str(exc)) from exc


def latexmk_argv(bundle: ProjectBundle, engine: str) -> list[str]:
    argv = ["latexmk", *LATEXMK_OPTIONS, ENGINES[engine][0]]
    if engine == "lualatex":
        trailer_id = bundle.manifest_sha256[:32].upper()
        argv.append(f"-usepretex=\\pdfvariable trailerid{{[<{trailer_id}> <{trailer_id}>]}}")
    return [*argv, bundle.entry_path]


def build_environment(work: WorkArea, bundle: ProjectBundle) -> dict[str, str]:
    """The whole environment of the build: nothing of the agent's own leaks in."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(work.home),
        "TEXMFHOME": str(work.home / "texmf"),
        "TEXMFVAR": str(work.home / "texmf-var"),
        "TEXMFCONFIG": str(work.home / "texmf-config"),
        # Caches (LuaTeX's font database) only in the job's area, never in the system's
        # TEXMFSYSVAR, which a build running as root (local executor) could otherwise write.
        "TEXMFCACHE": str(work.home / "texmf-var"),
        "TEXMFOUTPUT": str(work.sources),
        # Paranoid: no reading or writing of absolute paths, parent directories or dot files.
        "openin_any": "p",
        "openout_any": "p",
        "shell_escape": "f",
        "SOURCE_DATE_EPOCH": str(bundle.source_epoch),
        "FORCE_SOURCE_DATE": "1",
        # Unwrapped log lines keep "file:line: message" and file names whole for the diagnostics.
        "max_print_line": "10000",
        "error_line": "254",
        "half_error_line": "238",
        "TZ": "UTC",
        "LC_ALL": "C.UTF-8",
    }


def _evidence(run: CompletedRun, build_log: BuildLog, work: WorkArea, jobname: str) -> BuildEvidence:
    return BuildEvidence(
        run=run,
        log=build_log.parsed_text,
        stderr=build_log.stderr,
        diagnostics=build_log.diagnostics,
        pdf_produced=source_file_bytes(work, f"{jobname}.pdf") is not None,
        largest_file_bytes=largest_file_bytes(work),
    )
