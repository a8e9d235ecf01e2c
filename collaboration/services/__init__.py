"""Collaboration's writes and reads, one module per concern (see each module's docstring)."""

from collaboration.services.accepting import max_update_bytes, update_accept_and_project, updates_accept
from collaboration.services.compaction import log_compact, logs_compact_due
from collaboration.services.connections import (
    Access,
    Opened,
    connection_close,
    connection_open,
    connections_forgotten_delete,
    live_access,
    project_access,
    role_of,
)
from collaboration.services.layer_upkeep import channel_messages_expired_delete
from collaboration.services.outcomes import BatchStored, Outcome, Submitted, Verdict
from collaboration.services.projection import (
    projection_flush,
    projection_pending,
    projection_read,
    projections_overdue_flush,
)
from collaboration.services.replacing import text_edit, text_edit_within
from collaboration.services.state import live_diff, live_state_vector, state_read

__all__ = [
    "Access",
    "BatchStored",
    "Opened",
    "Outcome",
    "Submitted",
    "Verdict",
    "channel_messages_expired_delete",
    "connection_close",
    "connection_open",
    "connections_forgotten_delete",
    "live_access",
    "live_diff",
    "live_state_vector",
    "log_compact",
    "logs_compact_due",
    "max_update_bytes",
    "project_access",
    "projection_flush",
    "projection_pending",
    "projection_read",
    "projections_overdue_flush",
    "role_of",
    "state_read",
    "text_edit",
    "text_edit_within",
    "update_accept_and_project",
    "updates_accept",
]
