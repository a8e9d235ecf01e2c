from dataclasses import dataclass

from processing.operations.base import Operation, ResultRole, closed_options_parse, options_normalized
from quire_wire import PPTX_INPUT_SCHEMA

MiB = 1024 * 1024


@dataclass(frozen=True)
class PptxImportOptions:
    """The input profile is declared by the distribution; Core only carries its value."""

    input_profile: str = "editable"

    @classmethod
    def parse(cls, payload):
        return closed_options_parse(cls, payload)

    def normalized(self):
        return options_normalized(self)


PPTX_IMPORT_TYPST = Operation(
    name="pptx.import.typst/v1",
    job_class="file_import",
    input_schema=PPTX_INPUT_SCHEMA,
    options_type=PptxImportOptions,
    permission=None,
    project_types=(),
    result_roles=(
        ResultRole("bundle", ("application/x-tar",), 256 * MiB),
        ResultRole("report", ("application/json",), 1 * MiB),
    ),
    reusable=False,  # every import provisions a new project of its own
    endpoint="imports-pptx",
)
