"""Which operation builds a project to PDF: LaTeX projects with LaTeX, Typst projects with Typst.

``POST /v1/projects/{id}/builds`` and the page's Build PDF use it, so a client never names the operation.
"""

import uuid

from access import facade as access
from workspace import facade as workspace

BUILDS = {"latex": "latex.compile.pdf/v1", "typst": "typst.compile.pdf/v1"}


def build_operation_for(*, project_id: uuid.UUID) -> str:
    """The operation that builds this project; raises ProjectNotFound for a project that does not exist."""
    project = workspace.project_describe(project_id=project_id)
    if project is None:
        raise access.ProjectNotFound()
    return BUILDS[project.type]
