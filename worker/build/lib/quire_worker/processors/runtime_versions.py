"""Versions that processor contracts name: the Python distributions a processor runs on."""

from importlib import metadata

MISSING = "missing"


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution``, or ``"missing"`` (the processor then says it is unavailable)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return MISSING
