"""Workspace size limits (deployment settings may lower or raise them)."""

from django.conf import settings

MiB = 1024 * 1024


def max_files_per_project() -> int:
    return getattr(settings, "WORKSPACE_MAX_FILES", 5000)


def max_asset_bytes() -> int:
    return getattr(settings, "WORKSPACE_MAX_ASSET_BYTES", 64 * MiB)


def max_text_bytes() -> int:
    return getattr(settings, "WORKSPACE_MAX_TEXT_BYTES", 2 * MiB)


def max_project_bytes() -> int:
    return getattr(settings, "WORKSPACE_MAX_PROJECT_BYTES", 512 * MiB)
