"""Structured log lines, for Core and the worker agent alike: ``time level logger "message" key=value ...``.

Not the protocol itself, but a format both programs share (operators grep and parse both logs alike).

Correlation fields (job, attempt, operation, session, claim, processor
contract) are passed with ``extra={...}`` and printed as key=value pairs so
that a line can be grepped and parsed. Never log document content or secrets.
"""

import json
import logging

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class StructuredFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = {key: value for key, value in vars(record).items() if key not in _STANDARD}
        parts = [
            self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            record.levelname,
            record.name,
            json.dumps(record.getMessage()),
        ]
        parts.extend(f"{key}={json.dumps(value, default=str)}" for key, value in sorted(fields.items()))
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line
