"""The rules of a project's tree, checked under the fence before a change is written.

- A path is a file or a folder, never both: a file's ancestors are folders, and nothing sits inside a file.
- Two names that differ only in case (``Figures/`` and ``figures/``, ``Main.tex`` and ``main.tex``) never
  live side by side: a project unpacks into a real directory on any machine, case-insensitive ones included.
- Every folder a file sits in exists as a folder of its own (``ProjectFolder``), so folders outlive their last
  file and may be empty.

``PathTree`` holds one project's paths as they are now; a change asks it first, then tells it what it did,
so one batch (a zip, several files dropped at once) is checked as a whole against the tree and itself.
"""

import uuid
from collections.abc import Iterable

from workspace.exceptions import PathConflict, PathExists
from workspace.models import ProjectFile, ProjectFolder
from workspace.paths import path_ancestors

FILE, FOLDER = "file", "folder"


def _key(path: str) -> str:
    return path.casefold()


class PathTree:
    def __init__(self, files: Iterable[str], folders: Iterable[str]):
        self._entries: dict[str, tuple[str, str]] = {}  # casefolded path → (path, FILE | FOLDER)
        for path in folders:
            self._entries[_key(path)] = (path, FOLDER)
        for path in files:
            self._entries[_key(path)] = (path, FILE)

    @classmethod
    def of_project(cls, project_id: uuid.UUID) -> "PathTree":
        """The project's tree as committed (read under the caller's fence)."""
        files = ProjectFile.objects.filter(project_id=project_id).values_list("path", flat=True)
        folders = ProjectFolder.objects.filter(project_id=project_id).values_list("path", flat=True)
        return cls(files, folders)

    def kind_of(self, path: str) -> str | None:
        """FILE or FOLDER when exactly ``path`` exists, else None."""
        found = self._entries.get(_key(path))
        return found[1] if found is not None and found[0] == path else None

    def is_folder(self, path: str) -> bool:
        return self.kind_of(path) == FOLDER

    def folders_missing_for(self, path: str) -> list[str]:
        """The folders ``path`` needs that do not exist yet, outermost first; raises ``PathConflict`` when an
        ancestor is a file or clashes in case with an existing folder."""
        missing = []
        for ancestor in path_ancestors(path):
            found = self._entries.get(_key(ancestor))
            if found is None:
                missing.append(ancestor)
            elif found[1] == FILE:
                raise PathConflict(f"{found[0]} is a file, so it cannot hold {path}.", details=_clash(path, found[0]))
            elif found[0] != ancestor:
                raise _case_clash(path, found[0])
        return missing

    def require_free(self, path: str, *, kind: str, ignoring: str | None = None) -> None:
        """Raise unless a new ``kind`` may take ``path`` (``ignoring`` the entry being moved there, which may
        differ from it in case only)."""
        found = self._entries.get(_key(path))
        if found is not None and found[0] != ignoring:
            if found[0] != path:
                raise _case_clash(path, found[0])
            if found[1] == FILE and kind == FILE:
                raise PathExists(details={"path": path})
            raise PathConflict(details=_clash(path, found[0]))

    def add(self, path: str, kind: str) -> None:
        self._entries[_key(path)] = (path, kind)

    def remove(self, path: str) -> None:
        self._entries.pop(_key(path), None)

    def folders(self) -> list[str]:
        return [path for path, kind in self._entries.values() if kind == FOLDER]


def _clash(path: str, existing: str) -> dict:
    return {"path": path, "clashes_with": existing}


def _case_clash(path: str, existing: str) -> PathConflict:
    return PathConflict(
        f"{path} differs from {existing} only in case; on many computers they would be the same name.",
        details={**_clash(path, existing), "rule": "case_insensitive_clash"},
    )
