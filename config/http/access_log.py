"""The access log of `make run` and of a deployment without a proxy's own log: one line per request a person
made. Polls (agents' long-polls and heartbeats, the task center's and the PDF pane's refreshes, health checks,
Prometheus' scrapes) are logged at DEBUG: at INFO they would be most of the log and hide the rest.
"""

import logging
import re

# uvicorn's access record: (client address, method, path with query, HTTP version, status).
POLLED_PATHS = re.compile(
    r"^/internal/processing/v1/"  # the worker agents' protocol: long-polls, heartbeats, transfers
    r"|^/tasks/(badge|list|[0-9a-f-]{36})(\?|$)"  # the task center's badge, list and active rows
    r"|^/projects/[0-9a-f-]{36}/processing/(build-status|actions|output-log)(\?|$)"  # the project page's status
    r"|^/v1/processing/jobs/[0-9a-f-]{36}\?(.*&)?wait="  # an API client's long-poll for a job's end
    r"|^/(healthz|metrics)(\?|$)"
)


class PollsAtDebug(logging.Filter):
    """Re-levels the access records of polls to DEBUG, and drops them unless the logger is enabled for it."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not (isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str)):
            return True
        if not POLLED_PATHS.match(args[2]):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
