"""History keeps old content from the collector, forever by default; a retention folds older versions into a base."""

from datetime import timedelta

import pytest
from django.db.models import F

from tests.workspace.history.conftest import history_of, put_text
from workspace import collector, facade, services
from workspace.history.models import Version
from workspace.models import TextContent
from workspace.storage import asset_storage

pytestmark = pytest.mark.django_db

NO_GRACE = timedelta(0)


def test_content_only_an_old_version_names_is_kept_by_the_collector(owner_client, owner, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "figure.png", "old figure")
    put_text(owner_client, project, "main.tex", "old text\n")
    time_passes(3600)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")
    put_text(owner_client, project, "main.tex", "new text\n")
    old = history_of(owner_client, project)[1]["id"]

    collector.text_contents_collect(grace=NO_GRACE), collector.assets_collect(grace=NO_GRACE)

    assert owner_client.get(f"/v1/projects/{project.pk}/history/{old}/files/figure.png").content == b"old figure"
    assert owner_client.get(f"/v1/projects/{project.pk}/history/{old}/files/main.tex").content == b"old text\n"


def test_a_retention_folds_older_versions_into_a_base_and_frees_their_content(
    owner_client, owner, project, settings, time_passes
):
    settings.QUIRE_HISTORY_DAYS = 30
    time_passes(3600)
    put_text(owner_client, project, "figure.png", "figure of a file deleted long ago")
    time_passes(3600)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")
    put_text(owner_client, project, "main.tex", "as it was a month ago\n")
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "as it is\n")
    history_of(owner_client, project)  # folded
    Version.objects.filter(number__lt=4).update(ended_at=F("ended_at") - timedelta(days=31))
    figure = asset_storage().put(b"figure of a file deleted long ago")

    report = facade.content_collect()

    assert report["histories_pruned"] == 1
    assert facade.content_collect()["histories_pruned"] == 0  # once pruned, not due again till it ages
    assert [version["id"] for version in history_of(owner_client, project)] == [4, 3]
    base = owner_client.get(f"/v1/projects/{project.pk}/history/3/files/main.tex")
    assert base.content == b"as it was a month ago\n"
    assert owner_client.get(f"/v1/projects/{project.pk}/history/3/files/figure.png").status_code == 404
    collector.assets_collect(grace=NO_GRACE)
    assert not asset_storage().exists(figure)
    assert TextContent.objects.filter(content="as it was a month ago\n").exists()
