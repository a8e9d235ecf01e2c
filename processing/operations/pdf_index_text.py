from processing.operations.base import NoOptions, Operation, ResultRole

MiB = 1024 * 1024

PDF_INDEX_TEXT = Operation(
    name="pdf.index.text/v1",
    job_class="document_ingest",
    input_schema="pdf-version/v1",
    options_type=NoOptions,
    permission="edit",
    project_types=("latex", "typst"),
    result_roles=(ResultRole("pages", ("application/json",), 64 * MiB),),
    reusable=False,
    finalizer="processing.finalization.finalizers.index_library_version",
    endpoint="library-versions",
)
