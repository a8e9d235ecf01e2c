"""Compiling a captured Typst project offline: package detection, network denial, diagnostics.

Registry packages (``#import "@preview/cetz:0.3.0"``) cannot be fetched in the sandbox, so a
project naming one fails as ``unsupported_dependency`` before compiling. The compiler is also
kept off the network on its own: a fresh network namespace when the kernel allows one, proxy
variables pointing nowhere, and empty package directories. Should it still try to download,
that error is classified the same way.
"""

import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

import typst

from quire_worker.processors.child_protocol import ConversionFailure, diagnostic_entry

_PACKAGE_SPEC = re.compile(r'"(@[a-z0-9][a-z0-9_-]*/[a-z0-9][a-z0-9_-]*(?::[0-9][0-9A-Za-z.+-]*)?)"')
_DOWNLOAD_URL = re.compile(r"/([a-z0-9_-]+)/([a-z0-9_-]+)-([0-9][0-9A-Za-z.+-]*?)\.tar\.gz")
_SPEC_IN_MESSAGE = re.compile(r"@[a-z0-9_-]+/[a-z0-9_-]+(?::[0-9][0-9A-Za-z.+-]*)?")
_PACKAGE_ERRORS = ("failed to download package", "package not found", "failed to load package")
_DIAGNOSTIC_HEAD = re.compile(r"^(error|warning): (.*)$")
_DIAGNOSTIC_LOCATION = re.compile(r"^\s*┌─ (.+):(\d+):(\d+)\s*$")
_UNREACHABLE_PROXY = "http://127.0.0.1:9"


@dataclass(frozen=True)
class PackageUse:
    spec: str
    file: str
    line: int


def registry_packages(files_root: Path, typst_paths: list[str]) -> list[PackageUse]:
    """Every ``"@namespace/name:version"`` string in the project's Typst files, outside line comments."""
    uses = []
    for path in typst_paths:
        text = (files_root / path).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith("//"):
                continue
            uses += [PackageUse(match.group(1), path, number) for match in _PACKAGE_SPEC.finditer(line)]
    return uses


def refuse_registry_packages(uses: list[PackageUse]) -> None:
    if not uses:
        return
    specs = sorted({use.spec for use in uses})
    entries = tuple(
        diagnostic_entry(
            f"imports the registry package {use.spec}, which the sandbox cannot fetch",
            file=use.file,
            line=use.line,
        )
        for use in uses
    )
    raise ConversionFailure(
        "unsupported_dependency",
        "registry_package",
        f"The project imports Typst registry packages that cannot be fetched here: {', '.join(specs)}.",
        entries,
    )


@dataclass(frozen=True)
class NetworkIsolation:
    packages: Path
    cache: Path
    entry: dict  # an info diagnostic saying how the compiler was kept off the network


def deny_network(scratch_dir: Path) -> NetworkIsolation:
    """Keep this process off the network; give the compiler empty package directories."""
    isolated = _enter_network_namespace()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ[name] = os.environ[name.lower()] = _UNREACHABLE_PROXY
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = ""
    packages, cache = scratch_dir / "typst-packages", scratch_dir / "typst-package-cache"
    packages.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    how = "a private network namespace" if isolated else "proxy variables pointing at a closed port"
    return NetworkIsolation(packages, cache, diagnostic_entry(f"compiler network: {how}", severity="info"))


def _enter_network_namespace() -> bool:
    """A network namespace of our own (no interfaces but a down loopback), if the kernel lets us."""
    try:
        os.unshare(os.CLONE_NEWNET)  # enough when privileged
        return True
    except (AttributeError, OSError):
        pass
    uid, gid = os.getuid(), os.getgid()
    try:
        os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNET)
    except OSError:
        return False  # e.g. inside a sandbox that forbids nested namespaces: it has no network anyway
    # Map our ids to themselves so files keep their owners inside the new user namespace.
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    return True


def compile_failure(error: typst.TypstError, files_root: Path) -> ConversionFailure:
    """A compile error as ``processor_rejected`` with file:line entries (``unsupported_dependency``
    when the compiler wanted a package)."""
    entries = parse_diagnostics(str(getattr(error, "diagnostic", "") or error), files_root)
    messages = [entry["message"] for entry in entries] or [
        without_work_path(str(getattr(error, "message", error)), files_root)
    ]
    wanted = sorted({spec for message in messages for spec in _package_specs(message)})
    if wanted or any(marker in message for message in messages for marker in _PACKAGE_ERRORS):
        named = ", ".join(wanted) or "a package"
        return ConversionFailure(
            "unsupported_dependency",
            "registry_package",
            f"The project needs {named}, which cannot be fetched here.",
            tuple(entries),
        )
    first = entries[0] if entries else None
    where = f"{first['file']}:{first['line']}: " if first and first["file"] else ""
    return ConversionFailure(
        "processor_rejected",
        "compile_error",
        f"The Typst project does not compile: {where}{messages[0]}",
        tuple(entries),
    )


def parse_diagnostics(text: str, files_root: Path) -> list[dict]:
    """Typst's rendered diagnostics as entries: severity, message, project-relative file, line."""
    entries: list[dict] = []
    for line in text.splitlines():
        head = _DIAGNOSTIC_HEAD.match(line)
        if head:
            message = without_work_path(head.group(2).strip(), files_root)
            entries.append(diagnostic_entry(message, severity=head.group(1)))
            continue
        location = _DIAGNOSTIC_LOCATION.match(line)
        if location and entries and entries[-1]["file"] is None:
            entries[-1]["file"] = _project_path(location.group(1), files_root)
            entries[-1]["line"] = int(location.group(2))
    return entries


def warning_entries(warnings: list, files_root: Path) -> list[dict]:
    entries = []
    for warning in warnings:
        parsed = parse_diagnostics(str(getattr(warning, "diagnostic", "") or ""), files_root)
        message = without_work_path(str(getattr(warning, "message", warning)), files_root)
        entries += parsed or [diagnostic_entry(message, severity="warning")]
    return entries


def without_work_path(text: str, files_root: Path) -> str:
    """``text`` with the job's work directory taken out of the paths it names ("searched at main/x.typ", not
    at /var/lib/…/input/files/main/x.typ): where a worker keeps its jobs is nobody's business but its own."""
    for root in {str(files_root.resolve()), str(files_root)}:
        text = text.replace(root + "/", "").replace(root, ".")
    return text


def _project_path(shown: str, files_root: Path) -> str:
    """Typst shows paths relative to the working directory; answer relative to the project."""
    absolute = Path(os.path.normpath(os.path.join(os.getcwd(), shown)))
    try:
        return posixpath.normpath(absolute.relative_to(files_root.resolve()).as_posix())
    except ValueError:
        return shown


def _package_specs(message: str) -> list[str]:
    specs = _SPEC_IN_MESSAGE.findall(message)
    specs += [f"@{namespace}/{name}:{version}" for namespace, name, version in _DOWNLOAD_URL.findall(message)]
    return specs
