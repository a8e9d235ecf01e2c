"""Which processors this host can run: each is registered only when its tools are present."""

import importlib
import logging

from processing.worker.contracts import Processor

logger = logging.getLogger(__name__)

# operation → "module:Class"; a processor whose module or tools are missing is skipped with a log line.
KNOWN = {
    "latex.compile.pdf/v1": "processing.worker.processors.latex:LatexProcessor",
    "pdf.index.text/v1": "processing.worker.processors.pdf_text:PdfTextProcessor",
    "pptx.import.typst/v1": "processing.worker.processors.pptx_import:PptxImportProcessor",
    "typst.compile.pdf/v1": "processing.worker.processors.typst_pdf:TypstPdfProcessor",
    "typst.export.pptx/v1": "processing.worker.processors.typst_export:TypstExportProcessor",
    "test.echo/v1": "processing.worker.processors.echo:EchoProcessor",
}
TEST_ONLY = {"test.echo/v1"}


def processors_available(*, wanted: set[str] | None, test_operations: bool) -> list[Processor]:
    found = []
    for operation, target in KNOWN.items():
        if (wanted is not None and operation not in wanted) or (operation in TEST_ONLY and not test_operations):
            continue
        module_name, class_name = target.split(":")
        try:
            processor = getattr(importlib.import_module(module_name), class_name)()
        except (ImportError, AttributeError) as exc:
            logger.info("processor not installed", extra={"operation": operation, "reason": str(exc)})
            continue
        reason = processor.unavailable_reason()
        if reason:
            logger.warning("processor unavailable on this host", extra={"operation": operation, "reason": reason})
            continue
        found.append(processor)
    return found
