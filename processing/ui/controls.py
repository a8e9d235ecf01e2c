"""The contextual controls: Build PDF and exports on a project page, PPTX import on the new-project page.

A control exists only when this deployment exposes the operation (capabilities)
and the caller holds its permission; ``waiting`` says that no compatible worker
is live, so the page can say "the job will wait" before anything is submitted.
Submission checks all of it again.
"""

import uuid
from dataclasses import dataclass

from access import facade as access
from processing.kernel.capabilities import WAITING, capabilities_list
from processing.operations import REGISTRY
from processing.operations.builds import BUILDS
from processing.ui.task_center import operation_label
from workspace import facade as workspace

EXPORT_PPTX = "typst.export.pptx/v1"
EXPORTS = (EXPORT_PPTX,)
IMPORT_PPTX = "pptx.import.typst/v1"
COMPILERS = (("pdflatex", "pdfLaTeX"), ("xelatex", "XeLaTeX"), ("lualatex", "LuaLaTeX"))


@dataclass(frozen=True)
class Control:
    operation: str
    label: str
    waiting: bool
    input_profiles: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ProjectControls:
    project_id: uuid.UUID
    project_type: str
    compiler: str
    build: Control | None
    exports: tuple[Control, ...]
    compilers: tuple[tuple[str, str], ...] = COMPILERS

    @property
    def compiler_label(self) -> str:
        """The project's compiler as its authors spell it (pdfLaTeX, XeLaTeX, LuaLaTeX)."""
        return dict(self.compilers).get(self.compiler or "pdflatex", self.compiler)


def _control(capability) -> Control:
    profiles = tuple((capability.input_profiles or {}).items())
    return Control(capability.operation, operation_label(capability.operation), capability.state == WAITING, profiles)


def project_controls_for(*, user_id: int, project_id: uuid.UUID) -> ProjectControls:
    """The build and export controls for one project; raises ProjectNotFound when the caller cannot see it."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    project = workspace.project_describe(project_id=project_id)
    if project is None:
        raise access.ProjectNotFound()
    available = {
        capability.operation: _control(capability)
        for capability in capabilities_list(project_type=project.type)
        if access.permission_check(
            user_id=user_id, project_id=project_id, permission=REGISTRY[capability.operation].permission or "view"
        )
    }
    exports = tuple(available[name] for name in EXPORTS if name in available)
    build = available.get(BUILDS.get(project.type))
    return ProjectControls(project.id, project.type, project.compiler, build, exports)


def import_control_for() -> Control | None:
    """The PPTX import control with the distribution's input profiles, if this deployment offers it.

    Import needs only a signed-in user, so there is nothing to check about the caller.
    """
    capability = next((item for item in capabilities_list() if item.operation == IMPORT_PPTX), None)
    return _control(capability) if capability is not None else None
