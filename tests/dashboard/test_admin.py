"""The admin as the demo login meets it: reachable (the demo user is staff), every model
under a label spelled right."""

import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.test import Client

from ingest import demo

COMMAND_MODULE = "ingest.management.commands.load_demo"


@pytest.fixture
def demo_login(
    monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path, lake: Path
) -> Iterator[str]:
    """`load_demo` with no demo runs to write: only the login and the demo rules."""
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(demo, "DEMO_STEPS", [])
    monkeypatch.setenv("FLEETSCOPE_DEMO_PASSWORD", "a-long-demo-password")
    out = io.StringIO()
    call_command("load_demo", "--quiet", stdout=out)
    assert out.getvalue().splitlines()[-1] == "login: demo / a-long-demo-password"
    yield "a-long-demo-password"
    # The command binds demo.DEMO_STEPS when first imported, and tests/ingest/test_demo.py
    # patches that list before its first call: leave the module unimported for it.
    sys.modules.pop(COMMAND_MODULE, None)


@pytest.mark.django_db
def test_the_demo_login_reaches_the_admin_and_its_settings(demo_login: str) -> None:
    client = Client()
    assert client.login(username="demo", password=demo_login)
    index = client.get("/admin/")
    assert index.status_code == 200
    page = index.content.decode()
    for label in ("Report deliveries", "GPU prices", "API tokens", "Model prices", "Channels"):
        assert f">{label}</a>" in page, label
    assert client.get("/admin/analytics/gpuprice/add/").status_code == 200
    assert client.get("/admin/dashboard/apitoken/").status_code == 200


def test_every_admin_label_is_spelled_as_a_person_would() -> None:
    plurals = {str(m._meta.verbose_name_plural) for m in admin.site._registry}
    assert {"report deliveries", "GPU prices", "API tokens"} <= plurals
    assert [p for p in plurals if p.endswith("ys")] == []  # Django's default: "deliverys"
    assert [p for p in plurals if p.startswith(("gpu ", "api ", "Gpu ", "Api "))] == []
