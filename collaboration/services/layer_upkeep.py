"""Upkeep of the PostgreSQL channel layer's message table (``channels_postgres``).

The layer delivers a message by NOTIFY and leaves its row behind until a cleanup that it schedules only when
a channel leaves a group; a server with editors that stay connected would let the table grow. Messages
expire after a minute (nobody reads them after that), so the maintenance loop deletes the expired ones.
"""

from django.conf import settings
from django.utils import timezone


def channel_messages_expired_delete() -> int:
    if "channels_postgres" not in settings.CHANNEL_LAYERS["default"]["BACKEND"]:
        return 0
    from channels_postgres.models import Message

    deleted, _ = Message.objects.using("channels_postgres").filter(expire__lt=timezone.now()).delete()
    return deleted
