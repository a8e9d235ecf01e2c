"""Retention: with ``QUIRE_HISTORY_DAYS`` set, versions older than that are folded into the newest of them,
which becomes the base: it holds every file the project had when it ended, as made by it. Content only those
older versions named is then left to the collector (workspace/collector.py). Labels on them go with them.
By default (0) history is kept forever.
"""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from workspace.history.folding import history_fold
from workspace.history.models import HistoryCursor, Version, VersionChange
from workspace.history.reading import state_at


def histories_prune() -> int:
    """The maintenance loop's step: fold every project's versions older than the retention into its base;
    returns how many projects had any."""
    if not settings.QUIRE_HISTORY_DAYS:
        return 0
    cutoff = timezone.now() - timedelta(days=settings.QUIRE_HISTORY_DAYS)
    due = (
        Version.objects.filter(ended_at__lt=cutoff)
        .values("project_id")
        .annotate(older=Count("id"))
        .filter(older__gte=2)  # one is the base already
        .order_by("project_id")
        .values_list("project_id", flat=True)
    )
    return sum(history_prune(project_id=project_id, cutoff=cutoff) for project_id in list(due[:200]))


def history_prune(*, project_id: uuid.UUID, cutoff: datetime) -> bool:
    """Fold the versions that ended before ``cutoff`` into the newest of them; returns whether any were."""
    history_fold(project_id=project_id)
    with transaction.atomic():
        HistoryCursor.objects.select_for_update().filter(project_id=project_id).first()  # no fold meanwhile
        base = Version.objects.filter(project_id=project_id, ended_at__lt=cutoff).order_by("-number").first()
        if base is None or not Version.objects.filter(project_id=project_id, number__lt=base.number).exists():
            return False
        state = state_at(project_id=project_id, number=base.number)
        VersionChange.objects.filter(project_id=project_id, number__lte=base.number).delete()
        Version.objects.filter(project_id=project_id, number__lt=base.number).delete()
        VersionChange.objects.bulk_create(
            VersionChange(
                version=base,
                project_id=project_id,
                number=base.number,
                file_id=file.file_id,
                file_kind=file.file_kind,
                path=file.path,
                old_path=file.path,
                existed_before=False,
                exists_after=True,
                sha_after=file.sha256,
            )
            for file in state.values()
        )
        return True
