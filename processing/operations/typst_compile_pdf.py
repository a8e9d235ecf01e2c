"""``typst.compile.pdf/v1``: a Typst project build, the counterpart of ``latex.compile.pdf/v1``.

It shares the builds' idempotency scope (``project-builds``): one Build PDF command per project,
whichever language the project is written in. Results are reused exactly as LaTeX builds are.
"""

from processing.operations.base import BuildOptions, Operation, ResultRole
from quire_wire import PROJECT_BUNDLE_SCHEMA

KiB = 1024
MiB = 1024 * KiB

TYPST_COMPILE_PDF = Operation(
    name="typst.compile.pdf/v1",
    job_class="project_build",
    input_schema=PROJECT_BUNDLE_SCHEMA,
    options_type=BuildOptions,  # a version to build, at most: Typst has one compiler, the manifest fixes the rest
    permission="build",
    project_types=("typst",),
    result_roles=(
        ResultRole("pdf", ("application/pdf",), 128 * MiB),
        ResultRole("log", ("text/plain",), 1 * MiB, required=False),
        ResultRole("report", ("application/json",), 64 * KiB, required=False),  # {"words", "counted_by"}
    ),
    reusable=True,
    endpoint="project-builds",
)
