"""load_demo: the demo runs are written once, loaded once, and the demo login works."""

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.core.management import call_command

import warehouse
from analytics.alerts.models import AlertRule
from analytics.alerts.rules import RULES
from analytics.runs import quarantine, queries
from analytics.runs.paging import Paging
from ingest import demo
from ingest.synthetic import ErrorTrend, RunSpec
from ingest.synthetic.harness import build_events
from ingest.synthetic.truth import GroundTruth

pytestmark = pytest.mark.usefixtures("lake")

NOW = datetime(2026, 3, 2, 12, 30, 45, tzinfo=UTC)
TINY = RunSpec(run="tiny-demo", seed=2, hours=2, workers=12, planners=2, peak_commits_per_hour=60)


@pytest.fixture
def tiny_demo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: object) -> None:
    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]
    monkeypatch.setattr(
        demo,
        "DEMO_STEPS",
        [demo.DemoStep("tiny-demo", "tiny", demo.write_synthetic(TINY), demo.load_agent_events)],
    )


def load_demo() -> list[str]:
    out = io.StringIO()
    call_command("load_demo", "--quiet", stdout=out)
    return out.getvalue().strip().splitlines()


@pytest.mark.django_db
def test_it_loads_the_demo_once_and_prints_the_same_login_every_time(
    tiny_demo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEETSCOPE_DEMO_PASSWORD", raising=False)
    first = load_demo()
    second = load_demo()
    events = len(build_events(demo.spec_at(TINY, datetime.now(UTC))))
    assert (
        first[0]
        == f"tiny-demo: written and loaded; accepted {events}, quarantined 0, duplicates 0 (tiny)"
    )
    assert second[0] == "tiny-demo: already there; accepted 0, quarantined 0, duplicates 0 (tiny)"
    assert first[-1] == second[-1]
    password = first[-1].removeprefix("login: demo / ")
    assert len(password) == 16
    assert authenticate(username="demo", password=password) is not None
    assert (Path(settings.DATA_DIR) / "demo" / "password").stat().st_mode & 0o777 == 0o600
    assert [r.run for r in queries.list_runs()] == ["tiny-demo"]
    assert first[-2] == "alert rules: 13 demo rules added" and second[-2] == "alert rules: there"
    # Every run as the runs list shows it, its agents counted from the log itself.
    log = Path(settings.DATA_DIR) / "demo" / "tiny-demo" / "tiny-demo.jsonl"
    logged = {orjson.loads(line)["agent"] for line in log.read_bytes().splitlines()}
    [tiny] = queries.list_runs()
    assert first[-4:-2] == [
        "runs: 1",
        f"  run tiny-demo: {len(logged)} agents, {tiny.commits:,} commits, {tiny.errors} errors;"
        " active",
    ]
    assert sorted(AlertRule.objects.values_list("kind", flat=True)) == sorted(RULES)
    assert all(r.channels.count() == 1 for r in AlertRule.objects.all())


@pytest.mark.django_db
def test_the_password_can_come_from_the_environment(
    tiny_demo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLEETSCOPE_DEMO_PASSWORD", "a-long-demo-password")
    assert load_demo()[-1] == "login: demo / a-long-demo-password"
    assert authenticate(username="demo", password="a-long-demo-password") is not None
    assert not (Path(settings.DATA_DIR) / "demo" / "password").exists()


def test_the_demo_runs_end_now_except_the_finished_one() -> None:
    browser = demo.spec_at(demo.BROWSER, NOW)
    assert browser.start == datetime(2026, 3, 2, 0, 30, tzinfo=UTC)
    compiler = demo.spec_at(demo.COMPILER, NOW)
    assert compiler.start == datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    assert compiler.start + timedelta(hours=compiler.hours) == datetime(
        2026, 3, 2, 9, 30, tzinfo=UTC
    )


def test_the_demo_shows_a_stall_a_rising_error_rate_and_a_run_stalled_now() -> None:
    def truth(spec: RunSpec) -> GroundTruth:
        events = build_events(demo.spec_at(spec, NOW))
        return GroundTruth(spec, events, len(events), 0, 0)

    gap = timedelta(minutes=30)
    browser = truth(demo.BROWSER)
    assert len(browser.stalls(gap)) == 1 and browser.current_stall(gap) is None
    assert max(browser.commits_per_bucket(3600).values()) > 900
    assert demo.COMPILER.error_trend == ErrorTrend.RISING and demo.COMPILER.finished
    docs = truth(demo.DOCS)
    since = docs.current_stall(gap, now=NOW)
    assert since is not None and NOW - since > timedelta(minutes=40)
    # The stall counts on while the run is still logging, and ends when it goes quiet.
    assert docs.current_stall(gap, now=NOW + timedelta(minutes=14)) == since
    assert docs.current_stall(gap, now=NOW + timedelta(minutes=16)) is None
    assert truth(demo.COMPILER).current_stall(gap) is None  # finished


def test_the_docs_demo_quarantines_its_five_malformed_lines(tmp_path: Path) -> None:
    [step] = [s for s in demo.DEMO_STEPS if s.name == "docs-demo"]
    step.prepare(tmp_path, NOW)
    assert step.load(tmp_path, None).quarantined == 5
    page = quarantine.run_quarantine("docs-demo", Paging())
    assert page.total == 5
    assert {line.source for line in page.lines} == {str(tmp_path / "docs-demo.jsonl")}


def test_the_otlp_demo_is_three_peoples_sessions_sent_as_claude_code_sends_them(
    tmp_path: Path, settings: object
) -> None:
    settings.DATA_DIR = tmp_path  # type: ignore[attr-defined]  # the spool goes here
    [step] = [s for s in demo.DEMO_STEPS if s.name == "otlp-demo"]
    folder = tmp_path / "otlp-demo"
    folder.mkdir()
    step.prepare(folder, NOW)
    first = step.load(folder, None)
    # Events: alice 4 turns x 5 + the commit's Bash result and its commit + a failed test
    # = 23; bob 3 x 5 + 2 + an API error = 18; carol 2 x 5 + 2 + her subagent's call, stop
    # and spawn = 15. Metric points: 7 series per person.
    assert (first.accepted, first.duplicates, first.quarantined) == (56 + 21, 0, 0)
    again = step.load(folder, None)
    assert (again.accepted, again.duplicates) == (0, 56)
    # Tokens per turn k: input 1500 + 100k and 200, output 400 + 50k and 800.
    day = "2026-03-02"
    assert {r.run: r for r in queries.list_runs()} == {
        "demo-otlp-alice": queries.RunTotals(
            "demo-otlp-alice", datetime.fromisoformat(f"{day}T09:30:00+00:00"),
            datetime.fromisoformat(f"{day}T10:01:00+00:00"), 1, 23, 1, 1,
            4 * 1700 + 100 * 6, 4 * 1200 + 50 * 6, "otlp"),
        "demo-otlp-bob": queries.RunTotals(
            "demo-otlp-bob", datetime.fromisoformat(f"{day}T10:30:00+00:00"),
            datetime.fromisoformat(f"{day}T10:53:00+00:00"), 1, 18, 1, 1,
            3 * 1700 + 100 * 3, 3 * 1200 + 50 * 3, "otlp"),
        "demo-otlp-carol": queries.RunTotals(
            "demo-otlp-carol", datetime.fromisoformat(f"{day}T11:00:00+00:00"),
            datetime.fromisoformat(f"{day}T11:15:00+00:00"), 2, 15, 1, 0,
            2 * 1700 + 100 + 900, 2 * 1200 + 50 + 210, "otlp"),
    }  # fmt: skip
    people = warehouse.fetch_all(
        "SELECT session, person, team, count(*) AS points FROM otlp_points GROUP BY ALL"
        " ORDER BY session"
    )
    assert [tuple(r.values()) for r in people] == [
        ("demo-otlp-alice", "alice@example.com", "platform", 7),
        ("demo-otlp-bob", "bob@example.com", "platform", 7),
        ("demo-otlp-carol", "carol@example.com", "payments", 7),
    ]
    [subagent_call] = warehouse.fetch_all(
        "SELECT agent, parent, input_tokens FROM events WHERE request_id = 'req_carol_agent'"
    )
    assert subagent_call == {"agent": "agent-d3m0a1", "parent": "main", "input_tokens": 900}


def test_register_adds_a_step_or_replaces_one_of_the_same_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(demo, "DEMO_STEPS", list(demo.DEMO_STEPS))
    step = demo.DemoStep(
        "docs-demo", "replaced", demo.write_synthetic(TINY), demo.load_agent_events
    )
    demo.register(step)
    assert [s.name for s in demo.DEMO_STEPS] == [
        "browser-demo",
        "compiler-demo",
        "agent-logs-demo",
        "aero-demo",
        "serving-demo",
        "otlp-demo",
        "docs-demo",
    ]
    assert demo.DEMO_STEPS[-1].description == "replaced"


@pytest.mark.django_db
def test_a_weak_password_from_the_environment_is_refused_in_one_line(
    tiny_demo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.management.base import CommandError

    monkeypatch.setenv("FLEETSCOPE_DEMO_PASSWORD", "password")
    with pytest.raises(CommandError) as refused:
        load_demo()
    assert str(refused.value) == (
        "FLEETSCOPE_DEMO_PASSWORD is refused: This password is too short. It must contain at "
        "least 12 characters. This password is too common."
    )
    assert authenticate(username="demo", password="password") is None


@pytest.mark.django_db
def test_the_generated_password_passes_the_validators(
    tiny_demo: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.contrib.auth import password_validation
    from django.contrib.auth.models import User

    monkeypatch.delenv("FLEETSCOPE_DEMO_PASSWORD", raising=False)
    password = load_demo()[-1].removeprefix("login: demo / ")
    password_validation.validate_password(password, User.objects.get(username="demo"))
