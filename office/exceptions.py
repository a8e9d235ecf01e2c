"""Every anticipated failure of an Office preview; the docstring is the default message."""

from foundation.errors import PayloadTooLarge, QuireError


class OfficeError(QuireError):
    """The Office preview could not be made."""

    code = "office_error"


class NotAnOfficeFile(OfficeError):
    """Only .docx, .xlsx, .pptx, .odt, .ods and .odp files have an Office preview."""

    code = "not_an_office_file"
    status_code = 415


class SourceTooLarge(PayloadTooLarge, OfficeError):
    """The file is larger than the Office preview accepts."""

    code = "office_source_too_large"


class SourceChanged(OfficeError):
    """The file changed while its preview was being made; ask again."""

    code = "office_source_changed"
    status_code = 409


class OfficeBusy(OfficeError):
    """The Office preview service is busy; retry shortly."""

    code = "office_busy"
    status_code = 503


class SpeculationEvicted(OfficeBusy):
    """A preview someone asked for needed the queue place of this prewarm."""

    code = "office_prewarm_evicted"


class BackgroundDisabled(OfficeError):
    """Background Office conversions are switched off."""

    code = "office_background_disabled"
    status_code = 409


class ConversionFailed(OfficeError):
    """LibreOffice could not convert this file; it may be damaged or not what its extension says."""

    code = "office_conversion_failed"
    status_code = 422


class ConversionTimedOut(OfficeError):
    """The conversion took longer than allowed and was stopped."""

    code = "office_conversion_timed_out"
    status_code = 504


class PdfTooLarge(OfficeError):
    """The preview PDF would be larger than allowed."""

    code = "office_pdf_too_large"
    status_code = 422


class ConverterUnavailable(OfficeError):
    """The document converter is not available right now; retry shortly."""

    code = "office_converter_unavailable"
    status_code = 503


class ConverterNotSandboxed(ConverterUnavailable):
    """Office previews are off: this server cannot sandbox its document converter."""

    code = "office_sandbox_unavailable"
