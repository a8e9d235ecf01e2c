from processing.operations.base import NoOptions, Operation, ResultRole
from quire_wire import PDF_VERSION_SCHEMA

MiB = 1024 * 1024

PDF_INDEX_TEXT = Operation(
    name="pdf.index.text/v1",
    job_class="document_ingest",
    input_schema=PDF_VERSION_SCHEMA,
    options_type=NoOptions,
    permission="edit",
    project_types=("latex", "typst"),
    result_roles=(ResultRole("pages", ("application/json",), 64 * MiB),),
    reusable=False,
    endpoint="library-versions",
)
