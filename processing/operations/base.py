import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from processing.exceptions import InvalidOptions


class OptionsError(InvalidOptions):
    pass


@dataclass(frozen=True)
class NoOptions:
    """An operation without options accepts only an empty object."""

    @classmethod
    def parse(cls, payload: dict[str, Any] | None):
        return closed_options_parse(cls, payload)

    def normalized(self) -> dict[str, Any]:
        return options_normalized(self)


def closed_options_parse(cls, payload: dict[str, Any] | None):
    """Build an options dataclass from a payload, refusing unknown keys and wrong types."""
    payload = payload or {}
    if not isinstance(payload, dict):
        raise OptionsError("Options must be a JSON object.")
    known = {item.name: item for item in dataclasses.fields(cls)}
    unknown = sorted(set(payload) - set(known))
    if unknown:
        raise OptionsError("Unknown options.", details={"unknown": unknown})
    values = {}
    for name, value in payload.items():
        if value is None:
            continue  # null means "the default"
        choices = getattr(cls, "CHOICES", {}).get(name)
        if choices is not None and (not isinstance(value, str | int | bool) or value not in choices):
            raise OptionsError(f"Option {name!r} must be one of {sorted(choices)}.", details={"option": name})
        values[name] = value
    return cls(**values)


@dataclass(frozen=True)
class BuildOptions:
    """A project build's options: ``version`` builds that version of the project's history instead of its
    current files (a label's "the text sent to the journal"); such a build is never the project's output.
    ``clean`` builds from scratch: no warm start and no earlier result reused ("Recompile from scratch").
    ``supersede`` (the page's "build when I stop typing") ends the requester's builds of the project still
    waiting in the queue as ``superseded``: the newest text is the one worth building."""

    version: int | None = None
    clean: bool | None = None
    supersede: bool | None = None

    @classmethod
    def parse(cls, payload):
        options = closed_options_parse(cls, payload)
        for flag in ("clean", "supersede"):
            if getattr(options, flag) is not None and not isinstance(getattr(options, flag), bool):
                raise OptionsError(f"Option {flag!r} is true or false.", details={"option": flag})
        if options.clean is False or options.supersede is False:
            options = dataclasses.replace(
                options, clean=options.clean or None, supersede=options.supersede or None
            )  # false is the default: the same command, the same digest
        version = options.version
        if version is not None and (
            isinstance(version, bool) or not isinstance(version, int) or not 0 < version < 2**62
        ):
            raise OptionsError(
                "Option 'version' is the number of a version of the project.", details={"option": "version"}
            )
        return options

    def normalized(self):
        return options_normalized(self)


def options_normalized(options) -> dict[str, Any]:
    """Canonical options: defaulted values are dropped so that they do not change the digest."""
    defaults = {item.name: item.default for item in dataclasses.fields(options)}
    return {name: value for name, value in dataclasses.asdict(options).items() if value != defaults[name]}


@dataclass(frozen=True)
class ResultRole:
    role: str
    media_types: tuple[str, ...]
    max_bytes: int
    required: bool = True


@dataclass(frozen=True)
class Operation:
    name: str
    job_class: str  # project_build | project_export | file_import | document_ingest
    input_schema: str
    options_type: type
    permission: str | None  # None: any signed-in user (imports)
    project_types: tuple[str, ...]
    result_roles: tuple[ResultRole, ...]
    reusable: bool
    endpoint: str  # the idempotency scope of its creation command
    deterministic_input: bool = True
    warm_starts: bool = False  # its processor starts from the previous build's ``warm`` result

    SCOPES: ClassVar[dict[str, str]] = {
        "project_build": "project",
        "project_export": "project",
        "file_import": "requester",
        "document_ingest": "project",
    }

    @property
    def reuse_scope(self) -> str:
        return self.SCOPES[self.job_class]

    @property
    def captures_project(self) -> bool:
        """Its input is a capture of the project; otherwise the request carries it (an upload)."""
        return self.job_class in ("project_build", "project_export")

    @property
    def publishes_output(self) -> bool:
        """Its success becomes the project's output, which every member sees (docs/architecture.md §7)."""
        return self.job_class == "project_build" and self.role("pdf") is not None

    def role(self, name: str) -> ResultRole | None:
        return next((role for role in self.result_roles if role.role == name), None)
