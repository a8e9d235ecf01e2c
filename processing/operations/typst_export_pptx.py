from processing.operations.base import NoOptions, Operation, ResultRole
from quire_wire import PROJECT_BUNDLE_SCHEMA

MiB = 1024 * 1024
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

TYPST_EXPORT_PPTX = Operation(
    name="typst.export.pptx/v1",
    job_class="project_export",
    input_schema=PROJECT_BUNDLE_SCHEMA,
    options_type=NoOptions,
    permission="export",
    project_types=("typst",),
    result_roles=(
        ResultRole("pptx", (PPTX,), 256 * MiB),
        ResultRole("report", ("application/json",), 1 * MiB),
    ),
    reusable=True,
    endpoint="project-exports-pptx",
)
