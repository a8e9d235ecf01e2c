"""Which TeX Live this worker has: versions for the processor contract, and what is missing.

Detected once per process from the tools themselves (``tex --version``, ``latexmk -v``,
``texcount -ver``); these are trusted system programs run with fixed arguments outside the sandbox.
"""

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

# Without these no LaTeX build can run at all; a missing engine or biber only fails the jobs needing it.
REQUIRED_PROGRAMS = ("latexmk", "perl", "tex", "kpsewhich", "pdflatex")
# texcount (Debian's texlive-extra-utils) only counts words: a worker without it builds without a report.
OPTIONAL_PROGRAMS = ("xelatex", "xdvipdfmx", "lualatex", "bibtex", "biber", "texcount")
VERSION_SECONDS = 10


@dataclass(frozen=True)
class TexLive:
    release: str | None  # "2022"
    banner: str | None  # "TeX Live 2022/Debian"
    latexmk_version: str | None  # "4.79"
    missing: tuple[str, ...]
    texcount_version: str | None = None  # "3.1.1"; None: no word counts

    @property
    def unavailable_reason(self) -> str | None:
        absent = [program for program in REQUIRED_PROGRAMS if program in self.missing]
        if absent:
            return f"TeX Live is incomplete on this worker: {', '.join(absent)} not found"
        if self.release is None or self.latexmk_version is None:
            return "could not tell the TeX Live release or the latexmk version from the installed tools"
        return None

    def has(self, program: str) -> bool:
        return program not in self.missing


@functools.cache
def detect_texlive() -> TexLive:
    missing = tuple(p for p in (*REQUIRED_PROGRAMS, *OPTIONAL_PROGRAMS) if shutil.which(p) is None)
    banner = _first_match(_version_output("tex"), r"\((TeX Live [^)]*)\)")
    release = _first_match(banner or "", r"TeX Live (\d{4})")
    latexmk_version = _first_match(_version_output("latexmk", "-v"), r"Version (\S+)")
    texcount_version = _first_match(_version_output("texcount", "-ver"), r"TeXcount version (\d[\w.]*)")
    return TexLive(
        release=release,
        banner=banner,
        latexmk_version=latexmk_version,
        missing=missing,
        texcount_version=texcount_version if "texcount" not in missing else None,
    )


def _version_output(program: str, flag: str = "--version") -> str:
    if shutil.which(program) is None:
        return ""
    try:
        completed = subprocess.run(  # noqa: S603 - a fixed, trusted system program
            [program, flag], capture_output=True, text=True, timeout=VERSION_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return completed.stdout + completed.stderr


def _first_match(text: str, pattern: str) -> str | None:
    found = re.search(pattern, text)
    return found.group(1) if found else None
