"""Office previews: what views, signal receivers and the admin ask of the per-process host."""

import asyncio
import concurrent.futures
import logging
import uuid

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections, transaction

from foundation.errors import QuireError
from office import runtime, selectors
from office.engine import office_extension, office_extension_require
from office.exceptions import ConverterUnavailable, OfficeBusy, OfficeError, SourceChanged, SourceTooLarge
from office.host import HostLimits, Preview, Priority, SourceRead, SourceRef
from office.host_client import RemoteHost
from office.libreoffice import EngineConfig, LibreOfficeEngine
from office.models import OfficeSwitch
from office.settle import in_thread
from operators import facade as operators
from workspace import facade as workspace

logger = logging.getLogger(__name__)


def host() -> runtime.HostRuntime | RemoteHost:
    """The machine's shared conversion host, which ``manage.py office_host`` serves on ``OFFICE_HOST_SOCKET``
    (the default); with ``OFFICE_HOST=process``, this process's own, started (and warmed) on first use."""
    return runtime.host_runtime(_host_from_settings)


def _host_from_settings() -> runtime.HostRuntime | RemoteHost:
    if settings.OFFICE_HOST == "shared":
        return RemoteHost(settings.OFFICE_HOST_SOCKET)
    return runtime_from_settings()


async def preview_get(*, user_id: int | None, project_id: uuid.UUID, path: str) -> Preview:
    """Authorize ``view``, then the file's PDF, for a person waiting for it (foreground).

    Authorization runs for every call, cache hits included. Raises ProjectNotFound,
    FileNotFound, InvalidPath, NotAnOfficeFile or another OfficeError.
    """
    meta = await sync_to_async(workspace.file_meta_for)(user_id=user_id, project_id=project_id, path=path)
    source = _source_of(meta)
    return await host().convert(source=source, read=source_reader(source), priority=Priority.FOREGROUND)


def prewarm_submit(*, actor_id: int, project_id: uuid.UUID, path: str) -> bool:
    """Convert a just-written Office file in the background; returns whether a prewarm was started."""
    if office_extension(path) is None:
        return False
    enabled = selectors.background_enabled()
    _switch_apply(enabled)
    if not enabled:
        return False
    try:
        meta = workspace.file_meta_for(user_id=actor_id, project_id=project_id, path=path)
    except QuireError:
        return False  # gone or no longer visible to its writer: nothing to prewarm
    source = _source_of(meta)
    work = host().submit(source=source, read=source_reader(source), priority=Priority.BACKGROUND)
    work.add_done_callback(prewarm_finished)
    return True


def background_set(*, enabled: bool, actor=None) -> None:
    """Turn background conversions on or off (this process at once, others at their next prewarm); an
    operator's switch (``actor``) is recorded in the audit trail in the same transaction."""
    with transaction.atomic():
        OfficeSwitch.objects.update_or_create(pk=OfficeSwitch.SINGLETON_PK, defaults={"background_enabled": enabled})
        if actor is not None:
            operators.action_record(
                actor=actor,
                action=operators.ActionKind.OFFICE_PREVIEWS,
                subject=f"background conversions {'on' if enabled else 'off'}",
                count=1,
            )
    _switch_apply(enabled and settings.OFFICE_BACKGROUND_ENABLED)


def _switch_apply(enabled: bool) -> None:
    """Tell the host this process uses, if it has one yet. A machine's preview service that is not answering
    misses it, and learns it from the next prewarm: neither a file write nor the switch fails for it."""
    current = runtime.host_runtime_current()
    if current is None:
        return
    try:
        current.background_set(enabled)
    except ConverterUnavailable:
        logger.warning("the office host did not take the background switch", extra={"enabled": enabled})


def _source_of(meta: workspace.FileMeta) -> SourceRef:
    office_extension_require(meta.path)
    return SourceRef(meta.project_id, meta.path, meta.sha256, meta.size_bytes)


def source_reader(source: SourceRef) -> SourceRead:
    async def read(max_bytes: int) -> tuple[bytes, str]:
        return await in_thread(_content_read, source, max_bytes, executor=host().reads)

    return read


def _content_read(source: SourceRef, max_bytes: int) -> tuple[bytes, str]:
    try:
        return workspace.file_content_read(project_id=source.project_id, path=source.path, max_bytes=max_bytes)
    except workspace.FileTooLarge as exc:
        raise SourceTooLarge(details={"limit_bytes": max_bytes}) from exc
    except workspace.FileNotFound as exc:
        raise SourceChanged(details={"path": source.path}) from exc
    finally:
        connections.close_all()  # this read thread serves no request that would close them


def prewarm_finished(work: concurrent.futures.Future | asyncio.Future) -> None:
    """Log a prewarm that failed for a reason worth an operator's look (a busy host is not one)."""
    if work.cancelled():
        return
    error = work.exception()
    if error is None or isinstance(error, OfficeBusy):
        return
    level = logging.INFO if isinstance(error, OfficeError) else logging.WARNING
    logger.log(level, "office prewarm failed", extra={"error": type(error).__name__})


def runtime_from_settings() -> runtime.HostRuntime:
    """A host of this process's own, with the limits and converters the settings give."""
    limits = HostLimits(
        max_running=settings.OFFICE_SLOTS,
        max_readers=settings.OFFICE_MAX_READERS,
        max_queued=settings.OFFICE_MAX_QUEUED,
        max_input_bytes=settings.OFFICE_MAX_INPUT_BYTES,
        max_source_bytes=settings.OFFICE_MAX_SOURCE_BYTES,
        index_entries=settings.OFFICE_INDEX_ENTRIES,
        cache_entries=settings.OFFICE_CACHE_ENTRIES,
        cache_bytes=settings.OFFICE_CACHE_BYTES,
        cache_entry_bytes=settings.OFFICE_CACHE_ENTRY_BYTES,
    )
    engine = EngineConfig(
        slots=settings.OFFICE_SLOTS,
        conversion_timeout=settings.OFFICE_CONVERSION_TIMEOUT_SECONDS,
        start_timeout=settings.OFFICE_START_TIMEOUT_SECONDS,
        max_conversions=settings.OFFICE_MAX_CONVERSIONS_PER_SLOT,
        max_pdf_bytes=settings.OFFICE_MAX_PDF_BYTES,
        soffice=settings.OFFICE_SOFFICE,
        uno_python=settings.OFFICE_UNO_PYTHON,
        allow_unsandboxed=settings.OFFICE_ALLOW_UNSANDBOXED,
        sandbox_uids_start=settings.OFFICE_SANDBOX_UIDS_START,
        paper_size=settings.OFFICE_PAPER_SIZE,
    )
    return runtime.HostRuntime(
        engine_factory=lambda: LibreOfficeEngine(engine),
        limits=limits,
        background_enabled=settings.OFFICE_BACKGROUND_ENABLED,
    )
