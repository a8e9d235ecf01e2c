"""One converter lifetime: the UNO bridge (in its sandbox) leading a new process group, and its office.

Killing a slot is SIGKILL to the whole group (SIGTERM can leave ``oosplash``
behind); it returns once the bridge has been reaped, so its capacity is free.
"""

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path

from office.exceptions import ConverterUnavailable
from office.sandbox import BRIDGE_INSIDE, SandboxLimits, directory_hand_over, sandbox_prefix

logger = logging.getLogger(__name__)

BRIDGE = Path(__file__).with_name("uno_bridge.py")

# Seeded into every new profile: no macros, no link updates, no update checks, no referer-less fetches. (No
# recalculation setting: LibreOffice recalculates on load regardless, so the bridge drops formulas instead.)
PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Update/Update"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""  # noqa: E501  one setting per line reads best


class SlotCrashed(Exception):
    """The bridge closed its output: the office died or the bridge gave up."""


@dataclass(frozen=True)
class SlotCommand:
    """How to launch a bridge: in the converter's sandbox (office/sandbox.py) as ``uids_start`` + the slot's
    index, or, only where the operator allowed it, without one."""

    uno_python: str
    soffice: str
    sandbox: bool
    start_timeout: float
    uids_start: int = 1_000_002_000
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    paper_size: str = "a4"


class Slot:
    def __init__(self, *, index: int, directory: Path, name: str, process: asyncio.subprocess.Process):
        self.index = index
        self.name = name
        self.directory = directory
        self.process = process
        self.office_pid: int | None = None
        self.conversions = 0

    @classmethod
    async def launch(cls, *, index: int, directory: Path, name: str, command: SlotCommand) -> "Slot":
        """Start a bridge and wait until its office accepts work; raises ConverterUnavailable."""
        profile = _profile_prepare(directory / "profile")
        if command.sandbox:
            uid = command.uids_start + index
            directory_hand_over(directory, uid)
            prefix, bridge = sandbox_prefix(directory, uid=uid, limits=command.limits, bridge=BRIDGE), BRIDGE_INSIDE
        else:
            prefix, bridge = [], str(BRIDGE)
        argv = [
            *prefix,
            command.uno_python,
            "-I",
            bridge,
            "--soffice",
            command.soffice,
            "--profile",
            str(profile),
            "--pipe",
            name,
            "--start-timeout",
            str(command.start_timeout),
            "--slot-group",
        ]
        with open(directory / "bridge.log", "ab") as log:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                cwd=directory,
                env=_bridge_environment(directory, command.paper_size),
            )
        slot = cls(index=index, directory=directory, name=name, process=process)
        try:
            ready = await asyncio.wait_for(slot._receive(), command.start_timeout + 5)
            slot.office_pid = ready["office_pid"]
        except (TimeoutError, SlotCrashed, KeyError, ValueError) as exc:
            await slot.kill()
            _profile_discard(profile)  # the next lifetime starts from a fresh profile
            logger.warning("office converter did not start", extra={"slot": index, "reason": repr(exc)})
            raise ConverterUnavailable() from exc
        return slot

    async def request(self, payload: dict) -> dict:
        """Send one conversion request and wait for its answer; raises SlotCrashed."""
        try:
            self.process.stdin.write(json.dumps(payload).encode() + b"\n")
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise SlotCrashed() from exc
        return await self._receive()

    async def _receive(self) -> dict:
        line = await self.process.stdout.readline()
        if not line:
            raise SlotCrashed()
        return json.loads(line)

    async def kill(self) -> None:
        """SIGKILL the slot's whole process group and reap the bridge."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()
        # Outside the sandbox a killed office leaves its UNO pipe socket in /tmp (LibreOffice's fixed place).
        Path(f"/tmp/OSL_PIPE_{os.getuid()}_{self.name}").unlink(missing_ok=True)  # noqa: S108


def _profile_prepare(profile: Path) -> Path:
    settings = profile / "user" / "registrymodifications.xcu"
    if not settings.exists():
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(PROFILE_SETTINGS)
    return profile


def _profile_discard(profile: Path) -> None:
    shutil.rmtree(profile, ignore_errors=True)


def _bridge_environment(directory: Path, paper_size: str) -> dict[str, str]:
    """Only what LibreOffice needs: the converter never sees Quire's credentials or database URL. A sheet that
    names no paper size is laid out on ``paper_size``: LibreOffice asks libpaper, which reads ``PAPERSIZE``
    (without it, the machine's /etc/papersize or its locale decide, Letter on many a US-configured host)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(directory),
        "LANG": "C.UTF-8",
        "PAPERSIZE": paper_size,
    }
