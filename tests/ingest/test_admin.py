"""The scrape-target admin shows and edits who sees a target (its team)."""

from django.contrib.auth.models import User
from django.test import Client

from analytics.costs.models import Team
from analytics.serving.models import ScrapeTarget


def test_the_scrape_target_admin_lists_and_edits_the_team(db: None) -> None:
    infra = Team.objects.create(name="infra")
    target = ScrapeTarget.objects.create(name="gpu-1", url="http://127.0.0.1:9/metrics")
    client = Client()
    client.force_login(User.objects.create_superuser("root", "root@example.com", "x-long-pass"))
    listing = client.get("/admin/ingest/scrapetarget/").content.decode()
    assert "column-team" in listing
    change = f"/admin/ingest/scrapetarget/{target.pk}/change/"
    assert 'name="team"' in client.get(change).content.decode()
    response = client.post(
        change,
        {
            "name": "gpu-1",
            "url": "http://127.0.0.1:9/metrics",
            "labels": "{}",
            "interval_seconds": 15,
            "timeout_seconds": 5.0,
            "enabled": "on",
            "team": infra.pk,
        },
    )
    assert response.status_code == 302
    assert ScrapeTarget.objects.get(pk=target.pk).team == infra
