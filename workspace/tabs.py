"""Extra tabs on the project page, contributed by higher contexts without Workspace importing them.

A context registers a tab (name, label and a function that renders its HTML
for a request and a project id) when its app is ready; the project page lists
the registered tabs and, when one is selected, shows what it renders.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpRequest


@dataclass(frozen=True)
class ProjectTab:
    name: str
    label: str
    render: Callable[[HttpRequest, uuid.UUID], str]


_TABS: dict[str, ProjectTab] = {}


def project_tab_register(*, name: str, label: str, render: Callable[[HttpRequest, uuid.UUID], str]) -> None:
    _TABS[name] = ProjectTab(name, label, render)


def project_tabs() -> list[ProjectTab]:
    return list(_TABS.values())


def project_tab(name: str) -> ProjectTab | None:
    return _TABS.get(name)
