"""The operation registry: every operation Core knows, as a versioned contract.

An operation declares its input schema, closed options, required permission,
project types, result roles with media types and size limits, and whether
results may be reused. Its Core-owned finalizer is registered by the room that
owns it (``processing.finalization.registry``). Exposure also needs the
distribution to allow it and the deployment to name a worker identity for it
(see ``processing.kernel.capabilities``).
"""

from processing.operations.base import NoOptions, Operation, OptionsError, ResultRole
from processing.operations.latex_compile_pdf import LATEX_COMPILE_PDF
from processing.operations.pdf_index_text import PDF_INDEX_TEXT
from processing.operations.pptx_import_typst import PPTX_IMPORT_TYPST
from processing.operations.test_echo import TEST_ECHO
from processing.operations.typst_compile_pdf import TYPST_COMPILE_PDF
from processing.operations.typst_export_pptx import TYPST_EXPORT_PPTX

REGISTRY: dict[str, Operation] = {
    operation.name: operation
    for operation in (
        LATEX_COMPILE_PDF,
        TYPST_COMPILE_PDF,
        TYPST_EXPORT_PPTX,
        PPTX_IMPORT_TYPST,
        PDF_INDEX_TEXT,
        TEST_ECHO,
    )
}

__all__ = [
    "LATEX_COMPILE_PDF",
    "PDF_INDEX_TEXT",
    "PPTX_IMPORT_TYPST",
    "REGISTRY",
    "TEST_ECHO",
    "TYPST_COMPILE_PDF",
    "TYPST_EXPORT_PPTX",
    "NoOptions",
    "Operation",
    "OptionsError",
    "ResultRole",
    "operation_get",
]


def operation_get(name: str) -> Operation | None:
    return REGISTRY.get(name)
