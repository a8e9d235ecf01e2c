"""Announcements other contexts may subscribe to. They carry facts, never business rules.

``file_written`` is sent after the transaction that created or replaced a file
commits (an Office upload lets the preview host prewarm its conversion).
"""

from django.dispatch import Signal

# sender=None; kwargs: project_id, path, kind, sha256, size_bytes, actor_id
file_written = Signal()
