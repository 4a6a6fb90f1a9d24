"""The licence: LICENSE holds the Apache License 2.0 in full and pyproject.toml names it."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_license_file_and_pyproject_agree_on_apache_2() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(text.split("\n")) > 200  # all nine sections and the appendix, not a notice
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "Apache-2.0"}
