"""The login page and the admin's login against a password-guessing loop: an account or an
address with too many failures is refused (429, one line saying when to retry, the same
whether or not the account exists) until its lock ends; other accounts and addresses log
in as usual; failures are filed in the database, cleared by a success, pruned when old."""

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.test import Client, RequestFactory

from analytics.access.models import LoginFailure
from dashboard.login import client_address
from tests.people import grant

PASSWORD = "a-long-enough-password"
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
LOCKED = "Too many failed logins: try again after 2026-03-02 10:15 UTC (in 15 minutes)."


class Clock:
    """django.utils.timezone.now, moved by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    at = Clock(T0)
    with mock.patch("django.utils.timezone.now", at):
        yield at


@pytest.fixture
def people(db: None, django_user_model: Any) -> None:
    grant(django_user_model.objects.create_user("carol", password=PASSWORD), role="viewer")
    grant(django_user_model.objects.create_user("dave", password=PASSWORD), role="viewer")
    grant(
        django_user_model.objects.create_user("root", password=PASSWORD, is_staff=True),
        role="admin",
    )


def log_in(client: Client, username: str, password: str, url: str = "/accounts/login/") -> Any:
    after = "/admin/" if url.startswith("/admin/") else ""  # as each login form posts it
    return client.post(url, {"username": username, "password": password, "next": after})


def refusal_line(answer: Any) -> str:
    [line] = [line.strip() for line in answer.content.decode().splitlines() if "Too many" in line]
    return line.removeprefix('<p class="error">').removesuffix("</p>")


def test_200_wrong_passwords_then_the_right_one_is_refused(people: None, clock: Clock) -> None:
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    answers = [log_in(guesser, "carol", f"guess-{n}").status_code for n in range(200)]
    assert answers[:5] == [200] * 5  # the form again, "didn't match"
    assert set(answers[5:]) == {429}
    right = log_in(guesser, "carol", PASSWORD)
    assert right.status_code == 429
    assert refusal_line(right) == LOCKED
    assert "_auth_user_id" not in guesser.session
    # Only the five that were checked are filed; the refused ones checked no password.
    assert LoginFailure.objects.filter(username="carol").count() == 5


def test_another_account_from_another_address_logs_in_meanwhile(people: None, clock: Clock) -> None:
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    for n in range(200):
        log_in(guesser, "carol", f"guess-{n}")
    other = Client(REMOTE_ADDR="198.51.100.20")
    answer = log_in(other, "dave", PASSWORD)
    assert answer.status_code == 302 and answer["Location"] == "/"
    assert answer.wsgi_request.user.get_username() == "dave"


def test_after_the_lock_the_right_password_works_and_clears_the_failures(
    people: None, clock: Clock
) -> None:
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    for n in range(5):
        clock.now = T0 + timedelta(minutes=n)  # failures at 10:00 ... 10:04
        log_in(guesser, "carol", f"guess-{n}")
    clock.now = T0 + timedelta(minutes=18, seconds=59)  # the lock runs from 10:04 to 10:19
    still = log_in(guesser, "carol", PASSWORD)
    assert still.status_code == 429
    assert refusal_line(still) == (
        "Too many failed logins: try again after 2026-03-02 10:19 UTC (in 1 minute)."
    )
    clock.now = T0 + timedelta(minutes=19)
    assert log_in(guesser, "carol", PASSWORD).status_code == 302
    assert LoginFailure.objects.filter(username="carol").count() == 0


def test_four_failures_lock_nothing_and_a_success_forgets_them(people: None, clock: Clock) -> None:
    client = Client()
    for n in range(4):
        assert log_in(client, "carol", f"guess-{n}").status_code == 200
    assert log_in(client, "carol", PASSWORD).status_code == 302
    client.logout()
    for n in range(4):  # four more: the first four were forgotten, so still no lock
        assert log_in(client, "carol", f"again-{n}").status_code == 200
    assert log_in(client, "carol", PASSWORD).status_code == 302


def test_failures_spread_wider_than_the_window_lock_nothing(people: None, clock: Clock) -> None:
    client = Client()
    for n in range(6):
        clock.now = T0 + timedelta(minutes=4 * n)  # 10:00, 10:04 ... 10:20: 4 in any 15 min
        assert log_in(client, "carol", f"guess-{n}").status_code == 200
    assert log_in(client, "carol", PASSWORD).status_code == 302


def test_an_account_that_does_not_exist_is_answered_the_same(people: None, clock: Clock) -> None:
    client = Client(REMOTE_ADDR="203.0.113.7")
    real = [log_in(client, "carol", f"guess-{n}") for n in range(6)]
    ghost = [log_in(client, "nobody-here", f"guess-{n}") for n in range(6)]
    assert [a.status_code for a in real] == [a.status_code for a in ghost] == [200] * 5 + [429]
    assert refusal_line(real[-1]) == refusal_line(ghost[-1]) == LOCKED
    mismatch = "Your username and password didn&#x27;t match. Please try again."
    assert mismatch in real[0].content.decode() and mismatch in ghost[0].content.decode()


def test_the_account_name_is_filed_whatever_its_case_and_spaces(people: None, clock: Clock) -> None:
    client = Client()
    for name in ("Carol", "CAROL", " carol", "carol ", "cArol"):
        log_in(client, name, "wrong-password")
    assert log_in(client, "carol", PASSWORD).status_code == 429


def test_twenty_failures_from_one_address_block_it_for_every_account(
    people: None, clock: Clock
) -> None:
    sprayer = Client(REMOTE_ADDR="203.0.113.9")
    for n in range(20):  # 20 account names, 1 guess each: no account lock
        assert log_in(sprayer, f"user-{n}", "password-guess").status_code == 200
    refused = log_in(sprayer, "dave", PASSWORD)
    assert refused.status_code == 429 and refusal_line(refused) == LOCKED
    assert log_in(Client(REMOTE_ADDR="203.0.113.10"), "dave", PASSWORD).status_code == 302


def test_limits_come_from_the_settings(people: None, clock: Clock, settings: Any) -> None:
    settings.FLEETSCOPE_LOGIN_MAX_FAILURES = 2
    settings.FLEETSCOPE_LOGIN_LOCK_MINUTES = 60
    client = Client()
    log_in(client, "carol", "wrong-1")
    log_in(client, "carol", "wrong-2")
    refused = log_in(client, "carol", PASSWORD)
    assert refusal_line(refused) == (
        "Too many failed logins: try again after 2026-03-02 11:00 UTC (in 60 minutes)."
    )


def test_old_failures_are_pruned_when_one_is_filed(people: None, clock: Clock) -> None:
    LoginFailure.objects.create(at=T0 - timedelta(minutes=31), username="old", address="x")
    LoginFailure.objects.create(at=T0 - timedelta(minutes=29), username="recent", address="x")
    log_in(Client(), "carol", "wrong-password")
    assert sorted(LoginFailure.objects.values_list("username", flat=True)) == ["carol", "recent"]


def test_the_admin_login_is_held_to_the_same_lock(people: None, clock: Clock) -> None:
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    answers = [log_in(guesser, "root", f"guess-{n}", "/admin/login/") for n in range(6)]
    assert [a.status_code for a in answers] == [200] * 5 + [429]
    right = log_in(guesser, "root", PASSWORD, "/admin/login/")
    assert right.status_code == 429
    assert LOCKED in right.content.decode()
    # One count for both doors: the page's login is locked for root as well.
    assert log_in(guesser, "root", PASSWORD).status_code == 429
    clock.now = T0 + timedelta(minutes=15)
    answer = log_in(guesser, "root", PASSWORD, "/admin/login/")
    assert answer.status_code == 302 and answer["Location"] == "/admin/"


def test_failures_at_the_admin_lock_the_login_page(people: None, clock: Clock) -> None:
    guesser = Client()
    for n in range(5):
        log_in(guesser, "carol", f"guess-{n}", "/admin/login/")
    assert log_in(guesser, "carol", PASSWORD).status_code == 429


def request_from(remote: str, forwarded: str | None = None) -> Any:
    request = RequestFactory().get("/accounts/login/", REMOTE_ADDR=remote)
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded
    return request


def test_the_client_is_remote_addr_without_trusted_proxies(settings: Any) -> None:
    settings.FLEETSCOPE_TRUSTED_PROXIES = []
    assert client_address(request_from("10.0.0.5", "198.51.100.1")) == "10.0.0.5"


def test_behind_a_trusted_proxy_the_client_is_the_nearest_untrusted_hop(settings: Any) -> None:
    settings.FLEETSCOPE_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client_address(request_from("10.0.0.5", "198.51.100.1")) == "198.51.100.1"
    # A client writing its own X-Forwarded-For: the proxy appends the real address.
    forged = request_from("10.0.0.5", "192.0.2.99, 198.51.100.1")
    assert client_address(forged) == "198.51.100.1"
    # Two proxies of ours in a row are skipped.
    assert client_address(request_from("10.0.0.5", "198.51.100.1, 10.1.2.3")) == "198.51.100.1"
    # Nothing but proxies, or no header: the proxy itself.
    assert client_address(request_from("10.0.0.5", "10.1.2.3")) == "10.0.0.5"
    assert client_address(request_from("10.0.0.5")) == "10.0.0.5"
    # Not from a trusted proxy: the header is the client's word, ignored.
    assert client_address(request_from("198.51.100.7", "192.0.2.1")) == "198.51.100.7"


def test_behind_a_trusted_proxy_the_lock_follows_the_forwarded_address(
    people: None, clock: Clock, settings: Any
) -> None:
    settings.FLEETSCOPE_TRUSTED_PROXIES = ["10.0.0.1/32"]
    sprayer = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    for n in range(20):
        log_in(sprayer, f"user-{n}", "password-guess")
    assert LoginFailure.objects.filter(address="203.0.113.9").count() == 20
    assert log_in(sprayer, "dave", PASSWORD).status_code == 429
    neighbour = Client(REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.10")
    assert log_in(neighbour, "dave", PASSWORD).status_code == 302
