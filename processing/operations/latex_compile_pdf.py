from dataclasses import dataclass
from typing import ClassVar

from processing.operations.base import BuildOptions, Operation, ResultRole
from quire_wire import PROJECT_BUNDLE_SCHEMA

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class LatexBuildOptions(BuildOptions):
    """``compiler`` overrides the project's setting for this build; omitted or null uses the project's."""

    compiler: str | None = None

    CHOICES: ClassVar[dict[str, frozenset[str]]] = {"compiler": frozenset({"pdflatex", "xelatex", "lualatex"})}


LATEX_COMPILE_PDF = Operation(
    name="latex.compile.pdf/v1",
    job_class="project_build",
    input_schema=PROJECT_BUNDLE_SCHEMA,
    options_type=LatexBuildOptions,
    permission="build",
    project_types=("latex",),
    result_roles=(
        ResultRole("pdf", ("application/pdf",), 128 * MiB),
        ResultRole("log", ("text/plain",), 1 * MiB, required=False),
        # Gzipped SyncTeX whose Input: records name project files by their project path.
        ResultRole("synctex", ("application/gzip",), 64 * MiB, required=False),
        ResultRole("report", ("application/json",), 64 * KiB, required=False),  # {"words", "counted_by", "start"}
        # The auxiliary files the next build starts from (processing/submission/warm_start.py); never shown.
        ResultRole("warm", ("application/gzip",), 20 * MiB, required=False),
    ),
    reusable=True,
    warm_starts=True,
    endpoint="project-builds",
)
