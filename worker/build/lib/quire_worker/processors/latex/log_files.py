"""Which file TeX was reading at a point of its log, followed through the parentheses it prints.

TeX writes ``(`` and the file's name when it opens a file and ``)`` when it closes it, in the
middle of everything else it prints: ``(./chapters/one.tex`` … ``)``. Ordinary text has
parentheses too, and user text (``\\typeout``, source lines in error contexts, box contents) may
leave one unbalanced. So: a ``(`` not followed by a file name opens a plain group that only
lasts until the end of its line (the log's parenthesised remarks are one line long); the lines
where user text is echoed are not scanned at all (the parser says which); and a ``file:line:``
error, which names the file TeX is reading, puts the stack back in order when it drifted.
"""

import posixpath
import re
from dataclasses import dataclass

# A file TeX opened: a path relative to the build directory ("./…") or absolute (the distribution).
OPENED_FILE = re.compile(r"\.?/[^\s(){}<>\[\]\"]+")
PARENTHESIS = re.compile(r"[()]")


@dataclass(frozen=True)
class LogFile:
    name: str  # project-relative for files in the build directory, else the absolute path TeX printed
    in_project: bool  # one of the project's own files (not a generated .aux/.toc/.bbl, not TeX Live's)


@dataclass(frozen=True)
class Place:
    """Where the log is: the innermost project file, and whether TeX was reading that very file."""

    file: str | None
    reading_it: bool  # False inside a package, a generated file or before any file was opened


class OpenFiles:
    def __init__(self, project_files: frozenset[str], build_directories: tuple[str, ...] = ()):
        self._project_files = project_files
        # Longest first, so that "chapters/one.tex" wins over a project file named "chapters/one".
        self._by_length = sorted(project_files, key=len, reverse=True)
        self._build_directories = tuple(directory.rstrip("/") + "/" for directory in build_directories)
        self._stack: list[LogFile | None] = []  # None: a plain parenthesis of the current line

    def place(self) -> Place:
        current = next((frame for frame in reversed(self._stack) if frame is not None), None)
        project = next((frame for frame in reversed(self._stack) if frame is not None and frame.in_project), None)
        return Place(project.name if project else None, current is not None and current == project)

    def follow(self, line: str) -> None:
        """Open and close the files ``line`` opens and closes; plain parentheses end with the line."""
        position = 0
        while found := PARENTHESIS.search(line, position):
            position = found.end()
            if found.group() == ")":
                if self._stack:
                    self._stack.pop()
                continue
            opened, position = self._opened_at(line, position)
            self._stack.append(opened)
        while self._stack and self._stack[-1] is None:
            self._stack.pop()

    def reading(self, printed_name: str) -> LogFile:
        """TeX says it is reading ``printed_name`` (a ``file:line:`` error): make that the current file."""
        file = self.log_file(printed_name)
        for depth in range(len(self._stack) - 1, -1, -1):
            if self._stack[depth] == file:
                del self._stack[depth + 1 :]
                return file
        self._stack.append(file)
        return file

    def log_file(self, printed_name: str) -> LogFile:
        name = self._relative(printed_name)
        return LogFile(name, name in self._project_files)

    def _opened_at(self, line: str, position: int) -> tuple[LogFile | None, int]:
        rest = line[position:]
        if rest.startswith("./"):
            # Project files may have spaces in their names, which the generic pattern stops at.
            known = next((name for name in self._by_length if rest[2:].startswith(name)), None)
            if known is not None:
                return LogFile(known, True), position + 2 + len(known)
        if found := OPENED_FILE.match(rest):
            return self.log_file(found.group()), position + found.end()
        return None, position

    def _relative(self, printed_name: str) -> str:
        for directory in self._build_directories:
            if printed_name.startswith(directory):
                printed_name = printed_name[len(directory) :]
                break
        if printed_name.startswith("/"):
            return printed_name
        return posixpath.normpath(printed_name)
