"""What the contextual controls offer: Build PDF and exports on a project page, PPTX import on the new-project page.

An offer exists only when this deployment exposes the operation (capabilities)
and the caller holds its permission; ``waiting`` says that no compatible worker
is live, so the page can say "the job will wait" before anything is submitted.
Submission checks all of it again.
"""

import uuid
from dataclasses import dataclass

from access import facade as access
from processing.capabilities import WAITING, capabilities_list
from processing.operations import REGISTRY
from processing.project_builds import BUILDS
from processing.task_center import operation_label
from workspace import facade as workspace

EXPORT_PPTX = "typst.export.pptx/v1"
EXPORTS = (EXPORT_PPTX,)
IMPORT_PPTX = "pptx.import.typst/v1"
COMPILERS = (("pdflatex", "pdfLaTeX"), ("xelatex", "XeLaTeX"), ("lualatex", "LuaLaTeX"))


@dataclass(frozen=True)
class Offer:
    operation: str
    label: str
    waiting: bool
    input_profiles: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ProjectOffers:
    project_id: uuid.UUID
    project_type: str
    compiler: str
    build: Offer | None
    exports: tuple[Offer, ...]
    compilers: tuple[tuple[str, str], ...] = COMPILERS

    @property
    def compiler_label(self) -> str:
        """The project's compiler as its authors spell it (pdfLaTeX, XeLaTeX, LuaLaTeX)."""
        return dict(self.compilers).get(self.compiler or "pdflatex", self.compiler)


def _offer(capability) -> Offer:
    profiles = tuple((capability.input_profiles or {}).items())
    return Offer(capability.operation, operation_label(capability.operation), capability.state == WAITING, profiles)


def project_offers_for(*, user_id: int, project_id: uuid.UUID) -> ProjectOffers:
    """The build and export controls for one project; raises ProjectNotFound when the caller cannot see it."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    project = workspace.project_describe(project_id=project_id)
    if project is None:
        raise access.ProjectNotFound()
    offers = {
        capability.operation: _offer(capability)
        for capability in capabilities_list(project_type=project.type)
        if access.permission_check(
            user_id=user_id, project_id=project_id, permission=REGISTRY[capability.operation].permission or "view"
        )
    }
    exports = tuple(offers[name] for name in EXPORTS if name in offers)
    return ProjectOffers(project.id, project.type, project.compiler, offers.get(BUILDS.get(project.type)), exports)


def import_offer_for() -> Offer | None:
    """The PPTX import control with the distribution's input profiles, if this deployment offers it.

    Import needs only a signed-in user, so there is nothing to check about the caller.
    """
    capability = next((item for item in capabilities_list() if item.operation == IMPORT_PPTX), None)
    return _offer(capability) if capability is not None else None
