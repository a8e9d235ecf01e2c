"""Which processors this host can run: each is registered only when its tools are present."""

import importlib
import logging

from quire_worker.contracts import Processor

logger = logging.getLogger(__name__)

# operation → "module:Class"; a processor whose module or tools are missing is skipped with a log line.
KNOWN = {
    "latex.compile.pdf/v1": "quire_worker.processors.latex.compile_pdf:LatexProcessor",
    "pdf.index.text/v1": "quire_worker.processors.pdf.index_text:PdfTextProcessor",
    "pptx.import.typst/v1": "quire_worker.processors.pptx.import_typst:PptxImportProcessor",
    "typst.compile.pdf/v1": "quire_worker.processors.typst.compile_pdf:TypstPdfProcessor",
    "typst.export.pptx/v1": "quire_worker.processors.typst.export_pptx:TypstExportProcessor",
    "test.echo/v1": "quire_worker.processors.echo:EchoProcessor",
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
