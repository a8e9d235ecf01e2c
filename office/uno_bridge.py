"""One warm LibreOffice for one conversion slot. Runs under the Python that has ``uno``, never Django's.

The host starts this script as the leader of a new process group; it starts
``soffice`` as its child (so killing the group kills both), connects to it over
a private UNO pipe and then converts one document at a time. Protocol, one JSON
object per line: it prints ``{"ready": true}`` once connected, then answers each
request ``{"source", "target", "import_filter", "export_filter"}`` on stdin with
``{"ok": true}`` or ``{"ok": false, "error": "..."}``. When stdin closes (the
host is gone) it kills the slot's process group (``--slot-group``), so no office
process outlives its host.

Documents are opened hidden, read-only, with macros never executed and links
never updated; the profile the host seeds also disables macros and link updates.
A spreadsheet's formulas are dropped before it is opened, so each cell shows the
value it was saved with: LibreOffice recalculates on load whatever its settings
say (always for files it does not believe Excel wrote, and volatile functions
such as ``INFO("osversion")`` in every file), and a recalculation can print what
the sandbox sees (its kernel, its paths) into the preview.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

NEVER_EXECUTE = 0  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
NO_UPDATE = 0  # com.sun.star.document.UpdateDocMode.NO_UPDATE

# Per spreadsheet format: the members that hold formulas, and the formula markup to drop (an OOXML cell's
# <f> element, an ODF cell's table:formula attribute); the cached value beside it stays.
OOXML_FORMULA = re.compile(rb"<(\w+:)?f(?:\s[^>]*)?(?:/>|>.*?</(\w+:)?f>)", re.S)
ODF_FORMULA = re.compile(rb'\stable:formula="[^"]*"')
FORMULAS = {
    ".xlsx": (re.compile(r"^xl/worksheets/[^/]+\.xml$"), OOXML_FORMULA),
    ".ods": (re.compile(r"^content\.xml$"), ODF_FORMULA),
}
MEMBER_LIMIT_BYTES = 512 * 1024 * 1024  # a member declaring more is refused, not read


def properties(**values) -> tuple:
    result = []
    for name, value in values.items():
        prop = PropertyValue()
        prop.Name, prop.Value = name, value
        result.append(prop)
    return tuple(result)


def office_start(soffice: str, profile: str, pipe: str) -> subprocess.Popen:
    command = [
        soffice,
        "--headless",
        "--invisible",
        "--nologo",
        "--norestore",
        "--nodefault",
        "--nolockcheck",
        "--nofirststartwizard",
        f"-env:UserInstallation={uno.systemPathToFileUrl(profile)}",
        f"--accept=pipe,name={pipe};urp;StarOffice.ComponentContext",
    ]
    null = subprocess.DEVNULL
    return subprocess.Popen(command, stdin=null, stdout=null, stderr=null)  # noqa: S603  fixed arguments


def office_connect(office: subprocess.Popen, pipe: str, timeout: float):
    """The remote Desktop, once the office accepts on its pipe; exits if it dies first."""
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + timeout
    while True:
        try:
            context = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
            return context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
        except NoConnectException:
            if office.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"office did not start (exit {office.poll()})") from None
            time.sleep(0.05)  # polling the office's pipe; nothing to wait on instead


def formulas_drop(path: str) -> None:
    """Rewrite the spreadsheet at ``path`` without its formulas (every other member as it was)."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMULAS:
        return
    members, formula = FORMULAS[extension]
    rewritten = path + ".values"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rewritten, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.file_size > MEMBER_LIMIT_BYTES:
                raise ValueError(f"{item.filename} is larger than a spreadsheet member may be")
            data = source.read(item)
            if members.match(item.filename):
                data = formula.sub(b"", data)
            target.writestr(item, data)
    os.replace(rewritten, path)


def document_convert(desktop, request: dict) -> None:
    formulas_drop(request["source"])
    load = properties(
        Hidden=True,
        ReadOnly=True,
        MacroExecutionMode=NEVER_EXECUTE,
        UpdateDocMode=NO_UPDATE,
        FilterName=request["import_filter"],
    )
    document = desktop.loadComponentFromURL(uno.systemPathToFileUrl(request["source"]), "_blank", 0, load)
    if document is None:
        raise ValueError("the document could not be opened")
    try:
        store = properties(FilterName=request["export_filter"])
        document.storeToURL(uno.systemPathToFileUrl(request["target"]), store)
    finally:
        document.close(True)


def answer(**fields) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def serve(desktop, office: subprocess.Popen) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            document_convert(desktop, request)
        except Exception as exc:  # every failure is reported to the host, which decides
            if office.poll() is not None:
                raise SystemExit("office exited during a conversion") from exc
            answer(ok=False, error=f"{type(exc).__name__}: {getattr(exc, 'Message', '') or exc}")
        else:
            answer(ok=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soffice", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--pipe", required=True)
    parser.add_argument("--start-timeout", type=float, default=60.0)
    parser.add_argument("--slot-group", action="store_true", help="kill the whole process group on exit")
    args = parser.parse_args()
    office = office_start(args.soffice, args.profile, args.pipe)
    try:
        desktop = office_connect(office, args.pipe, args.start_timeout)
        answer(ready=True, office_pid=office.pid)
        serve(desktop, office)
    finally:
        office.kill()
        if args.slot_group:  # the host made this process group for the slot alone
            os.killpg(0, signal.SIGKILL)


if __name__ == "__main__":
    main()
