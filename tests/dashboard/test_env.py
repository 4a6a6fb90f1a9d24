"""dashboard/env.py: each reader's default, what it accepts, and the one line it stops with."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from dashboard import env

VAR = "FLEETSCOPE_TEST_VALUE"


@pytest.fixture
def value(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(VAR, raising=False)
    return monkeypatch


def refusal(read: object, *args: object, **kwargs: object) -> str:
    assert callable(read)
    with pytest.raises(ImproperlyConfigured) as raised:
        read(VAR, *args, **kwargs)
    return str(raised.value)


def test_an_unset_or_blank_variable_is_the_default(value: pytest.MonkeyPatch) -> None:
    assert env.read_int(VAR, 48, minimum=1) == 48
    value.setenv(VAR, "  ")
    assert env.read_int(VAR, 48, minimum=1) == 48
    assert env.read_time_zone(VAR, "UTC") == "UTC"
    assert env.read_url(VAR, "filesystem://", schemes={"filesystem"}, example="x") == (
        "filesystem://"
    )


def test_an_integer_is_read_within_its_range(value: pytest.MonkeyPatch) -> None:
    value.setenv(VAR, "65535")
    assert env.read_int(VAR, 25, minimum=1, maximum=65535) == 65535
    value.setenv(VAR, "0")
    assert refusal(env.read_int, 25, minimum=1, maximum=65535) == (
        f"{VAR} must be an integer from 1 to 65535, got '0'"
    )
    assert (
        refusal(env.read_int, 25, maximum=-1) == f"{VAR} must be an integer of at most -1, got '0'"
    )
    value.setenv(VAR, "1.5")
    assert refusal(env.read_int, 25) == f"{VAR} must be an integer, got '1.5'"


def test_a_choice_is_read_in_any_case_and_answered_as_spelled(
    value: pytest.MonkeyPatch,
) -> None:
    value.setenv(VAR, "debug")
    assert env.read_choice(VAR, "WARNING", ["DEBUG", "WARNING"]) == "DEBUG"
    value.setenv(VAR, "loud")
    assert refusal(env.read_choice, "WARNING", ["WARNING", "DEBUG"]) == (
        f"{VAR} must be one of DEBUG, WARNING, got 'loud'"
    )


def test_a_time_of_day_has_no_utc_offset(value: pytest.MonkeyPatch) -> None:
    value.setenv(VAR, "06:45")
    assert env.read_time_of_day(VAR, "07:00") == "06:45"
    value.setenv(VAR, "07:00+02:00")  # the report's time is local to its own time zone
    assert refusal(env.read_time_of_day, "07:00") == (
        f"{VAR} must be a time of day HH:MM, such as 07:00, got '07:00+02:00'"
    )


def test_a_broker_url_may_name_a_transport_and_driver_or_fail_over(
    value: pytest.MonkeyPatch,
) -> None:
    schemes = {"redis", "sqla"}
    for url in ("sqla+postgresql://u@db/broker", "redis://a:6379/0;redis://b:6379/0"):
        value.setenv(VAR, url)
        assert env.read_url(VAR, "", schemes=schemes, example="redis://host:6379/0") == url
    value.setenv(VAR, "redis://a:6379/0;redis://b:x/0")
    assert refusal(env.read_url, "", schemes=schemes, example="redis://host:6379/0") == (
        f"{VAR} must be a URL such as redis://host:6379/0, got 'redis://a:6379/0;redis://b:x/0' "
        "(port could not be cast to integer value as 'x')"
    )


def test_a_database_url_becomes_djangos_entry(value: pytest.MonkeyPatch) -> None:
    value.setenv(VAR, "postgres://web:pw@db:5433/fleetscope")
    entry = env.read_database_url(VAR, "", conn_max_age=60)
    assert (entry["ENGINE"], entry["HOST"], entry["PORT"]) == (
        "django.db.backends.postgresql",
        "db",
        5433,
    )
    assert (entry["NAME"], entry["CONN_MAX_AGE"]) == ("fleetscope", 60)
    value.setenv(VAR, "sqlite://:memory:")
    assert env.read_database_url(VAR, "")["NAME"] == ":memory:"


def test_passwords_are_masked_in_the_line(value: pytest.MonkeyPatch) -> None:
    value.setenv(VAR, "postgres:dbname=lake host=db password=s3cret")
    assert "s3cret" not in refusal(env.read_catalog_url, "")
    assert "password=***" in refusal(env.read_catalog_url, "")
    value.setenv(VAR, "mysqll://root:s3cret@db/web")
    assert "root:***@db" in refusal(env.read_database_url, "")


def test_a_catalog_may_be_a_duckdb_file_and_data_a_folder_or_s3(
    value: pytest.MonkeyPatch,
) -> None:
    value.setenv(VAR, "ducklake:/srv/lake/meta.ducklake")
    assert env.read_catalog_url(VAR, "") == "ducklake:/srv/lake/meta.ducklake"
    for path in ("/srv/lake/", "s3://bucket/lake/"):
        value.setenv(VAR, path)
        assert env.read_data_path(VAR, "") == path
    value.setenv(VAR, "s3:///lake/")
    assert refusal(env.read_data_path, "") == (
        f"{VAR} must be a folder or an s3://bucket/prefix/ URL, got 's3:///lake/'"
    )


def test_networks_are_addresses_or_cidr_ranges(value: pytest.MonkeyPatch) -> None:
    assert env.read_networks(VAR, []) == []
    value.setenv(VAR, "10.0.0.1, 172.16.0.0/12,::1, 192.168.1.7/24")
    assert env.read_networks(VAR, []) == [
        "10.0.0.1/32",
        "172.16.0.0/12",
        "::1/128",
        "192.168.1.0/24",
    ]
    value.setenv(VAR, "10.0.0.1,proxy.internal")
    assert refusal(env.read_networks, []) == (
        "FLEETSCOPE_TEST_VALUE must be comma-separated IP addresses or networks such as "
        "10.0.0.1,172.16.0.0/12, got 'proxy.internal'"
    )
