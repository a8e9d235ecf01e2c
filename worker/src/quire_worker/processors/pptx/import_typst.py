"""``pptx.import.typst/v1``: a PPTX becomes a candidate Typst project (``workspace-bundle/v1``).

This orchestrator runs in the worker; the conversion itself runs in ``pptx_import_child``
inside the sandbox. Afterwards every output is validated again here: nothing the child wrote
is trusted. Profiles: ``editable`` (text as Typst markup) and ``faithful`` (each slide also
rendered by LibreOffice as a background image under that markup).
"""

import json
import shutil
import threading
from pathlib import Path

from quire_worker.contracts import (
    Executor,
    FailureClass,
    Limits,
    OutputFile,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.child_runner import run_child
from quire_worker.processors.pptx.fonts import SYSTEM_FONTS
from quire_worker.processors.pptx.slide_model import ImportBounds
from quire_worker.processors.runtime_versions import MISSING, installed_version
from quire_worker.processors.workspace_bundle import MEDIA_TYPE, WorkspaceBundleError, read_bundle

OPERATION = "pptx.import.typst/v1"
PROFILES = ("editable", "faithful")
CHILD_MODULE = "quire_worker.processors.pptx.import_typst_child"
REPORT_MEDIA_TYPE = "application/json"
MAX_REPORT_BYTES = 8 * 1024 * 1024
MAX_BUNDLE_FILES = 5000  # Workspace's default file count per project
_LIBRARIES = ("python-pptx", "typst", "pillow")
_LIBREOFFICE_SUPPORT_PATHS = (str(SYSTEM_FONTS), "/etc/fonts", "/etc/libreoffice", "/usr/share/libreoffice")


class PptxImportProcessor:
    operation = OPERATION
    input_profiles = PROFILES

    def __init__(self, *, bounds: ImportBounds | None = None, soffice: str | None = None):
        self.bounds = bounds or ImportBounds()
        self._soffice = soffice if soffice is not None else shutil.which("soffice")
        self.runtime_version = " ".join(f"{name}/{installed_version(name)}" for name in _LIBRARIES)
        self.contract = f"quire-pptx-import/2 {self.runtime_version} faithful-profile:libreoffice theme-looks fonts"

    def unavailable_reason(self, input_profile: str | None = None) -> str | None:
        """Why this host cannot import (at all, or with ``input_profile``), or None."""
        missing = [name for name in _LIBRARIES if installed_version(name) == MISSING]
        if missing:
            return f"The PPTX import needs the Python packages {', '.join(missing)}."
        if input_profile == "faithful" and not (self._soffice and Path(self._soffice).exists()):
            return "The faithful profile renders slides with LibreOffice (soffice), which is not installed."
        return None

    def run(
        self,
        *,
        input_dir: Path,
        output_dir: Path,
        request: dict,
        limits: Limits,
        cancel: threading.Event,
        executor: Executor,
    ) -> ProcessorResult:
        profile = request.get("input_profile") or "editable"
        self._check_request(profile, input_dir)
        settings = self._child_settings(profile, request, limits)
        # Both profiles copy substitute fonts from the system's into the project (``fonts.FontMapper``).
        fonts = tuple(path for path in (SYSTEM_FONTS,) if path.exists())
        extra_readable = self._libreoffice_paths() if profile == "faithful" else fonts
        outcome = run_child(
            module=CHILD_MODULE,
            input_dir=input_dir,
            output_dir=output_dir,
            settings=settings,
            limits=limits,
            cancel=cancel,
            executor=executor,
            extra_readable=extra_readable,
        )
        bundle_path = output_dir / "bundle.tar"
        report_path = output_dir / "report.json"
        bundle_name = _validated_bundle_name(bundle_path, limits)
        _validate_report(report_path)
        return ProcessorResult(
            outputs=(
                OutputFile("bundle", bundle_path, MEDIA_TYPE, f"{bundle_name}.workspace-bundle.tar"),
                OutputFile("report", report_path, REPORT_MEDIA_TYPE, "conversion-report.json"),
            ),
            diagnostics=outcome.diagnostics,
        )

    def _child_settings(self, profile: str, request: dict, limits: Limits) -> dict:
        filename = str(request.get("filename") or "presentation.pptx")[:255]
        settings = {"input_profile": profile, "filename": filename, "bounds": self.bounds.to_settings()}
        if profile == "faithful":  # LibreOffice gets most of the wall time, leaving room to finish up
            settings |= {
                "soffice": self._soffice,
                "render_timeout_seconds": round(limits.wall_seconds * 0.6, 1),
            }
        return settings

    def _check_request(self, profile: str, input_dir: Path) -> None:
        if profile not in PROFILES:
            raise ProcessorFailure(FailureClass.INVALID_INPUT, "unknown_profile", f"Unknown input profile {profile!r}.")
        reason = self.unavailable_reason(profile)
        if reason:
            raise ProcessorFailure(FailureClass.UNSUPPORTED_DEPENDENCY, "dependency_missing", reason)
        source = input_dir / "input.pptx"
        if source.is_symlink() or not source.is_file():
            raise ProcessorFailure(FailureClass.INVALID_INPUT, "input_missing", "The input has no input.pptx.")

    def _libreoffice_paths(self) -> tuple[Path, ...]:
        program_dir = Path(self._soffice).resolve().parent
        paths = [program_dir.parent, *(Path(path) for path in _LIBREOFFICE_SUPPORT_PATHS)]
        return tuple(path for path in paths if path.exists())


def _validated_bundle_name(path: Path, limits: Limits) -> str:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > limits.output_bytes:
        raise _contract_violation("bundle_missing", "The conversion left no bundle within the size limit.")
    try:
        bundle = read_bundle(path, max_files=MAX_BUNDLE_FILES, max_expanded_bytes=limits.output_bytes)
    except WorkspaceBundleError as exc:
        raise _contract_violation("bundle_invalid", f"The conversion wrote an invalid bundle: {exc.message}") from exc
    safe = "".join(char if char.isalnum() or char in " -_." else "_" for char in bundle.suggested_name)
    return safe.strip(" .")[:100] or "presentation"


def _validate_report(path: Path) -> None:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_REPORT_BYTES:
        raise _contract_violation("report_missing", "The conversion left no report within the size limit.")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _contract_violation("report_invalid", "The conversion report is not JSON.") from exc
    if not isinstance(report, dict) or report.get("schema") != "pptx-import-report/v1":
        raise _contract_violation("report_invalid", "The conversion report has the wrong schema.")


def _contract_violation(code: str, message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)
