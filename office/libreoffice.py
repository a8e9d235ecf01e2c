"""The real engine: a pool of warm LibreOffice slots, one conversion at a time in each.

Every slot has its own profile directory (two offices sharing one silently lose
output). A slot that crashes, passes the wall-clock limit, is cancelled or has
done ``max_conversions`` is killed and replaced in the background; each
replacement starts a new converter lifetime and bumps ``generation``.
"""

import asyncio
import contextlib
import io
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from office.engine import FORMATS, Conversion
from office.exceptions import ConversionFailed, ConversionTimedOut, ConverterNotSandboxed, PdfTooLarge
from office.sandbox import SandboxLimits, sandbox_unavailable_reason
from office.settle import in_thread
from office.slots import Slot, SlotCommand, SlotCrashed

logger = logging.getLogger(__name__)
MiB = 1024 * 1024


@dataclass(frozen=True)
class EngineConfig:
    slots: int = 2
    conversion_timeout: float = 30.0
    start_timeout: float = 60.0
    max_conversions: int = 100  # per converter lifetime
    max_pdf_bytes: int = 64 * MiB
    soffice: str = "soffice"
    uno_python: str = "/usr/bin/python3"
    allow_unsandboxed: bool = False  # the operator's explicit opt-out of office/sandbox.py
    sandbox_uids_start: int = 1_000_002_000  # slot i runs as this + i
    sandbox_limits: SandboxLimits = field(default_factory=SandboxLimits)
    paper_size: str = "a4"  # for a sheet that names none (libpaper's PAPERSIZE, which LibreOffice reads)


class LibreOfficeEngine:
    def __init__(self, config: EngineConfig):
        self.config = config
        self.generation = 1
        _leftovers_remove()
        self._root = Path(tempfile.mkdtemp(prefix=f"quire-office-{os.getpid()}-"))
        self._idle: asyncio.Queue[Slot | int] = asyncio.Queue()  # a ready slot, or a vacant slot's index
        for index in range(config.slots):
            self._idle.put_nowait(index)
        self._live: set[Slot] = set()
        self._background: set[asyncio.Task] = set()
        self._lifetimes = 0
        self._command: SlotCommand | None = None
        self._refusal: ConverterNotSandboxed | None = None  # no sandbox here, and no opt-out
        self._closed = False

    def warm(self) -> None:
        """Start every vacant slot in the background (call on the host's loop)."""
        while not self._idle.empty():
            item = self._idle.get_nowait()
            if isinstance(item, Slot):
                self._idle.put_nowait(item)
                return
            self._spawn(self._fill(item))

    def process_groups(self) -> list[int]:
        """Process group ids of the live slots (for diagnosis and tests)."""
        return [slot.process.pid for slot in self._live]

    async def convert(self, *, source: bytes, extension: str) -> Conversion:
        slot = await self._take()
        try:
            conversion = await self._convert_on(slot, source, extension)
        except (ConversionFailed, PdfTooLarge):
            self._idle.put_nowait(slot)  # the office answered: this lifetime goes on
            raise
        except BaseException as exc:  # timeout, crash, cancellation: this lifetime ends
            await self._retire(slot)
            if isinstance(exc, SlotCrashed):
                raise ConversionFailed("The converter crashed on this file.") from exc
            raise
        slot.conversions += 1
        if slot.conversions >= self.config.max_conversions:
            await self._retire(slot)
        else:
            self._idle.put_nowait(slot)
        return conversion

    async def close(self) -> None:
        self._closed = True
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await asyncio.gather(*(slot.kill() for slot in list(self._live)), return_exceptions=True)
        self._live.clear()
        shutil.rmtree(self._root, ignore_errors=True)  # small; and executors may be gone at interpreter exit

    async def _take(self) -> Slot:
        """A ready slot: an idle one, a dead idle one's replacement, or a vacancy launched now."""
        while isinstance(item := await self._idle.get(), Slot):
            if item.process.returncode is None:
                return item
            await self._retire(item)  # it died while idle; the file about to come is not to blame
        try:
            return await self._launch(item)
        except BaseException:
            self._idle.put_nowait(item)
            raise

    async def _convert_on(self, slot: Slot, source: bytes, extension: str) -> Conversion:
        form = FORMATS[extension]
        source_path, target_path = slot.directory / f"source{extension}", slot.directory / "preview.pdf"
        await in_thread(_files_reset, source_path, target_path, source)
        request = {
            "source": str(source_path),
            "target": str(target_path),
            "import_filter": form.import_filter,
            "export_filter": form.export_filter,
        }
        try:
            async with asyncio.timeout(self.config.conversion_timeout):
                answer = await slot.request(request)
        except TimeoutError as exc:
            raise ConversionTimedOut(details={"limit_seconds": self.config.conversion_timeout}) from exc
        if not answer.get("ok"):
            reason = answer.get("error")
            logger.info("office conversion refused", extra={"extension": extension, "reason": reason})
            raise ConversionFailed(details={"extension": extension})
        return await in_thread(self._collect, source_path, target_path)

    def _collect(self, source_path: Path, target_path: Path) -> Conversion:
        try:
            size = target_path.stat().st_size
            if size > self.config.max_pdf_bytes:
                raise PdfTooLarge(details={"limit_bytes": self.config.max_pdf_bytes})
            pdf = target_path.read_bytes()
            return Conversion(pdf, len(PdfReader(io.BytesIO(pdf)).pages))
        except (OSError, PyPdfError) as exc:
            raise ConversionFailed(details={"reason": "no readable PDF was produced"}) from exc
        finally:
            _files_reset(source_path, target_path, None)

    async def _retire(self, slot: Slot) -> None:
        """Kill a slot (returning once it is dead) and start its replacement in the background."""
        self._live.discard(slot)
        await slot.kill()
        self.generation += 1
        logger.info("office converter replaced", extra={"slot": slot.index, "generation": self.generation})
        if self._closed:
            return
        self._spawn(self._fill(slot.index))

    async def _fill(self, index: int) -> None:
        try:
            slot = await self._launch(index)
        except Exception:
            self._idle.put_nowait(index)  # the next conversion tries again, and reports unavailability
        else:
            self._idle.put_nowait(slot)

    async def _launch(self, index: int) -> Slot:
        command = self._command or await self._command_resolve()
        self._lifetimes += 1
        directory = self._root / f"slot-{index}"
        directory.mkdir(exist_ok=True)
        name = f"quire-office-{os.getpid()}-{index}-{self._lifetimes}"
        slot = await Slot.launch(index=index, directory=directory, name=name, command=command)
        self._live.add(slot)
        return slot

    async def _command_resolve(self) -> SlotCommand:
        """The slots' command; without a sandbox only where the operator allowed it (said once, at start)."""
        config = self.config
        if self._refusal is not None:
            raise self._refusal
        reason = await in_thread(sandbox_unavailable_reason)
        if reason is not None and not config.allow_unsandboxed:
            self._refusal = ConverterNotSandboxed(details={"reason": reason})
            logger.error(
                "office previews are refused: the converter cannot be sandboxed (%s); OFFICE_ALLOW_UNSANDBOXED=true "
                "runs it with the server's rights instead",
                reason,
            )
            raise self._refusal
        if reason is not None:
            logger.warning("office converters run WITHOUT a sandbox, as OFFICE_ALLOW_UNSANDBOXED says (%s)", reason)
        self._command = SlotCommand(
            config.uno_python,
            config.soffice,
            sandbox=reason is None,
            start_timeout=config.start_timeout,
            uids_start=config.sandbox_uids_start,
            limits=config.sandbox_limits,
            paper_size=config.paper_size,
        )
        return self._command

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _files_reset(source_path: Path, target_path: Path, source: bytes | None) -> None:
    for path in (source_path, target_path):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if source is not None:
        source_path.write_bytes(source)


def _leftovers_remove() -> None:
    """Remove work directories of server processes that died without closing their engine.

    A gunicorn worker stopped by a signal skips ``atexit``; its converters go (each
    bridge kills its slot when the host's pipe closes) but their directories stay.
    """
    for directory in Path(tempfile.gettempdir()).glob("quire-office-*-*"):
        owner = directory.name.split("-")[2]
        if owner.isdigit() and not _process_alive(int(owner)):
            shutil.rmtree(directory, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
