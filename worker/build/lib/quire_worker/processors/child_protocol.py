"""What a processor's sandboxed child writes back to its orchestrator, and how a child starts.

A child entry point is run as ``python -m <module> --input DIR --output DIR --settings JSON``
inside the sandbox. It may only write under the output directory. It writes its candidate
outputs there and, last of all, ``outcome.json``:

    {"status": "succeeded", "entries": [...]}
    {"status": "failed", "failure_class": ..., "code": ..., "message": ..., "entries": [...]}

where ``entries`` are diagnostics ``{"file", "line", "severity", "message"}``. A child that
dies without an outcome is judged by how it died (``child_runner``). This module is
imported on both sides of the sandbox, so it uses the standard library only.
"""

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

OUTCOME_FILE = "outcome.json"
SCRATCH_DIR = "scratch"
MAX_OUTCOME_BYTES = 512 * 1024
MAX_ENTRIES = 200


class ConversionFailure(Exception):
    """A classified failure raised inside a child; ``failure_class`` is a ``FailureClass`` value."""

    def __init__(self, failure_class: str, code: str, message: str, entries: tuple[dict, ...] = ()):
        super().__init__(message)
        self.failure_class = failure_class
        self.code = code
        self.message = message
        self.entries = entries


@dataclass(frozen=True)
class ChildArguments:
    input_dir: Path
    output_dir: Path
    settings: dict
    scratch_dir: Path = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "scratch_dir", self.output_dir / SCRATCH_DIR)


def child_main(convert: Callable[[ChildArguments], tuple[dict, ...]], argv: list[str] | None = None) -> int:
    """Run ``convert`` and record its outcome; ``convert`` returns warning entries or raises."""
    arguments = _parse_arguments(argv)
    arguments.scratch_dir.mkdir(parents=True, exist_ok=True)
    try:
        entries = convert(arguments)
    except ConversionFailure as failure:
        _write_outcome(
            arguments.output_dir,
            _failed(failure.failure_class, failure.code, failure.message, failure.entries),
        )
        return 2
    except MemoryError:
        outcome = _failed("resource_limit", "memory_exceeded", "The conversion ran out of memory.", ())
        _write_outcome(arguments.output_dir, outcome)
        return 2
    _write_outcome(arguments.output_dir, {"status": "succeeded", "entries": list(entries[:MAX_ENTRIES])})
    return 0


def _parse_arguments(argv: list[str] | None) -> ChildArguments:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--settings", default="{}")
    parsed = parser.parse_args(sys.argv[1:] if argv is None else argv)
    return ChildArguments(parsed.input, parsed.output, json.loads(parsed.settings))


def _failed(failure_class: str, code: str, message: str, entries: tuple[dict, ...]) -> dict:
    return {
        "status": "failed",
        "failure_class": failure_class,
        "code": code,
        "message": message,
        "entries": list(entries[:MAX_ENTRIES]),
    }


def _write_outcome(output_dir: Path, outcome: dict) -> None:
    partial = output_dir / (OUTCOME_FILE + ".partial")
    partial.write_text(json.dumps(outcome, ensure_ascii=False), encoding="utf-8")
    partial.replace(output_dir / OUTCOME_FILE)


def diagnostic_entry(
    message: str, *, file: str | None = None, line: int | None = None, severity: str = "error"
) -> dict:
    return {"file": file, "line": line, "severity": severity, "message": message}
