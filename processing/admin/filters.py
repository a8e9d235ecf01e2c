"""List filters whose values Core knows, so that a list page never reads every job to offer them.

Django's filter for a field without choices offers the values found in the table, a ``SELECT DISTINCT``
over every row on each page (with a million jobs, about half a second for each such filter). The
operations, result roles and media types are the registry's and the failure classes the wire vocabulary's;
the URLs stay Django's own
(``operation__exact=…``), which the Overview's links use.
"""

import copy

from django.contrib import admin

from processing.models import FailureClass
from processing.operations import REGISTRY


class _KnownValuesFilter(admin.ChoicesFieldListFilter):
    @staticmethod
    def known() -> list[tuple[str, str]]:
        raise NotImplementedError

    def __init__(self, field, request, params, model, model_admin, field_path):
        field = copy.copy(field)  # the model's own field keeps its (absent) choices
        field.choices = self.known()
        super().__init__(field, request, params, model, model_admin, field_path)


class _Operations(_KnownValuesFilter):
    @staticmethod
    def known():
        return [(name, name) for name in sorted(REGISTRY)]


class _FailureClasses(_KnownValuesFilter):
    @staticmethod
    def known():
        return list(FailureClass.choices)


class _ResultRoles(_KnownValuesFilter):
    @staticmethod
    def known():
        roles = {role.role for operation in REGISTRY.values() for role in operation.result_roles}
        return [(role, role) for role in sorted(roles)]


class _MediaTypes(_KnownValuesFilter):
    @staticmethod
    def known():
        types = {
            kind for operation in REGISTRY.values() for role in operation.result_roles for kind in role.media_types
        }
        return [(kind, kind) for kind in sorted(types)]


OperationFilter = ("operation", _Operations)
FailureClassFilter = ("failure_class", _FailureClasses)
ResultRoleFilter = ("role", _ResultRoles)
MediaTypeFilter = ("media_type", _MediaTypes)
