"""The People pages through the test client: the table of people with their figures
(tests/analytics/people/world.py), the team filter kept in the URL, a person's sessions
linked to their runs, what an empty warehouse says, and each user seeing their teams'."""

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from analytics.costs.models import Team
from tests.analytics.people import world
from tests.analytics.people.world import ANN, BOB
from tests.people import grant


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin(db: None) -> Any:
    return grant(User.objects.create_user("ada", "ada@example.com", "pw"), "admin")


@pytest.fixture
def telemetry(settings: Any, tmp_path: Path, lake: Path, db: None) -> None:
    settings.DATA_DIR = tmp_path
    world.build()


@pytest.mark.usefixtures("telemetry")
def test_the_people_table_lists_each_person_with_their_figures(admin: Any) -> None:
    response = _client(admin).get("/people/")
    assert response.status_code == 200
    people = response.context["people"]
    assert [(p.person, p.team, p.sessions) for p in people] == [(ANN, "infra", 3), (BOB, "web", 1)]
    html = response.content.decode()
    assert f'<a href="/people/{ANN}/">{ANN}</a>' in html
    # ann: 150 s active, $0.0675 (to the cent: $0.07), 4,300 tokens, +15 / -3 lines (a minus sign), 75.0%.
    for text in ("2m", "$0.07", "4.3k", "+15", "\u22123", "75.0%"):
        assert f">{text}<" in html, text
    assert response.context["teams"] == ["infra", "web"]


@pytest.mark.usefixtures("telemetry")
def test_the_team_filter_is_kept_in_the_url(admin: Any) -> None:
    response = _client(admin).get("/people/?team=web&last=all")
    assert [p.person for p in response.context["people"]] == [BOB]
    html = response.content.decode()
    assert '<option value="web" selected>web</option>' in html
    assert '<input type="hidden" name="last" value="all">' in html


@pytest.mark.usefixtures("telemetry")
def test_a_persons_sessions_are_one_click_from_their_runs(admin: Any) -> None:
    response = _client(admin).get(f"/people/{ANN}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<a href="/runs/s-ann-1/">s-ann-1</a>' in html
    assert '<a href="/runs/s-ann-2/">s-ann-2</a>' in html
    assert "s-ann-3 <span" in html and "/runs/s-ann-3/" not in html  # metrics only
    assert [d.date for d in response.context["person"].days] == ["2026-03-10", "2026-03-11"]


@pytest.mark.usefixtures("telemetry")
def test_a_person_of_another_team_is_not_found(db: None) -> None:
    web = Team.objects.create(name="web")
    wes = grant(User.objects.create_user("wes", "wes@example.com", "pw"), "viewer", (web,))
    client = _client(wes)
    assert [p.person for p in client.get("/people/").context["people"]] == [BOB]
    assert client.get(f"/people/{ANN}/").status_code == 404


@pytest.mark.usefixtures("telemetry")
def test_a_bad_range_is_a_422_with_the_form_kept(admin: Any) -> None:
    response = _client(admin).get("/people/?start=not-a-time&team=web")
    assert response.status_code == 422
    assert '<input type="hidden" name="team" value="web">' in response.content.decode()


def test_an_empty_warehouse_says_how_to_send_telemetry(lake: Path, admin: Any) -> None:
    response = _client(admin).get("/people/")
    html = response.content.decode()
    assert "No telemetry from people yet" in html
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://testserver\n" in html
    assert "Send telemetry" in html


@pytest.mark.usefixtures("telemetry")
def test_the_people_table_as_csv_is_the_tables_rows_with_the_pages_filter(admin: Any) -> None:
    client = _client(admin)
    html = client.get("/people/?team=web&last=all").content.decode()
    assert 'href="/people/?team=web&amp;last=all&amp;format=csv&amp;table=people"' in html
    answer = client.get("/people/?last=all&format=csv&table=people")
    assert answer["Content-Disposition"] == 'attachment; filename="fleetscope-people-people.csv"'
    body = b"".join(answer.streaming_content).decode()  # type: ignore[attr-defined]
    header, *rows = list(csv.reader(io.StringIO(body)))
    assert header[:3] == ["person", "team", "sessions"]
    # By hand from world.py: ann 3 sessions, 30+60+20+30 + 10 = 150 s active, $0.05 +
    # $0.0075 + $0.01, 1,000 + 2,000 + 1,000 in, 200 + 100 out, one commit event, +15/-3,
    # 3 accepted and 1 rejected edit; bob 1 session, 45 s, $0.02, 500 in, 50 out, 1 commit.
    ann, bob = ([r[0], r[1], int(r[2]), float(r[3]), float(r[4]), *map(int, r[5:])] for r in rows)
    assert ann == [ANN, "infra", 3, 150.0, pytest.approx(0.0675), 4000, 300, 1, 15, 3, 3, 1]
    assert bob == [BOB, "web", 1, 45.0, pytest.approx(0.02), 500, 50, 1, 0, 0, 0, 0]
    web = client.get("/people/?team=web&last=all&format=csv&table=people")
    assert [r[0] for r in csv.reader(io.StringIO(b"".join(web.streaming_content).decode()))] == [  # type: ignore[attr-defined]
        "person",
        BOB,
    ]
    assert client.get("/people/?format=csv&table=nope").status_code == 404
