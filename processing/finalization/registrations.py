"""Processing's own finalizers, registered for the operations whose jobs they finish."""

from processing.finalization.artifacts import publish_artifacts
from processing.finalization.builds import publish_build
from processing.finalization.provisioning import provision_imported_project
from processing.finalization.registry import finalizer_register
from processing.operations import (
    LATEX_COMPILE_PDF,
    PPTX_IMPORT_TYPST,
    TEST_ECHO,
    TYPST_COMPILE_PDF,
    TYPST_EXPORT_PPTX,
)


def finalizers_register() -> None:
    for operation in (LATEX_COMPILE_PDF, TYPST_COMPILE_PDF):
        finalizer_register(operation.name, publish_build)
    for operation in (TYPST_EXPORT_PPTX, TEST_ECHO):
        finalizer_register(operation.name, publish_artifacts)
    finalizer_register(PPTX_IMPORT_TYPST.name, provision_imported_project)
