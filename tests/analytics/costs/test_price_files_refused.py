"""Broken price files: each is refused whole by `manage.py load_prices` with one line naming
the file, the entry and the field, and nothing is saved; random documents and mutations of
a good one are either loaded whole or refused that way, never a traceback."""

from __future__ import annotations

import string
from datetime import date
from pathlib import Path

import orjson
import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analytics.costs.models import PRICE_FIELDS, ModelPrice, price_problem
from analytics.costs.price_files import read_price_file, save_prices
from analytics.costs.pricing import PriceBook
from lib.bounds import name_problem
from lib.errors import ParameterError

GOOD = {
    "model": "acme-coder",
    "input_per_mtok": 2,
    "output_per_mtok": 8,
    "cached_input_per_mtok": 0.5,
    "aliases": ["acme"],
    "provider": "acme",
    "valid_from": "2026-01-01",
}
GOOD_YAML = (
    "- model: acme-coder\n  input_per_mtok: 2\n  output_per_mtok: 8\n"
    "  cached_input_per_mtok: 0.5\n  aliases: [acme]\n  provider: acme\n"
    "  valid_from: 2026-01-01\n"
)


def _json(*entries: object) -> bytes:
    return orjson.dumps(list(entries))


def _entry(**change: object) -> dict[str, object]:
    entry = {**GOOD, **change}
    return {k: v for k, v in entry.items() if v is not _GONE}


_GONE = object()

# (file name, content, what the one line says after "<path>: ")
BROKEN = [
    ("syntax.yaml", b"- model: [acme\n  input: 2\n", "not YAML: "),
    ("tabs.yaml", b"- model: acme\n\t input_per_mtok: 2\n", "not YAML: "),
    ("syntax.json", b'[{"model": "acme",]', "not JSON: "),
    ("deep.json", b"[" * 5000 + b"]" * 5000, "not JSON: "),
    ("deep.yaml", b"[" * 5000 + b"]" * 5000, "not YAML we read: nested too deeply"),
    ("deep-value.json", _json(_entry(provider=[[[[[]]]]])), "entry 1 (acme-coder): provider"),
    ("inf.yaml", GOOD_YAML.replace(": 8", ": .inf").encode(), "output_per_mtok is not a finite"),
    ("nan.yaml", GOOD_YAML.replace(": 8", ": .nan").encode(), "output_per_mtok is not a finite"),
    (
        "huge.yaml",
        GOOD_YAML.replace(": 8", ": 1.0e+400").encode(),
        "output_per_mtok is not a finite",
    ),
    ("digits.yaml", GOOD_YAML.replace(": 8", ": " + "9" * 5000).encode(), "not YAML we read: "),
    ("over.json", _json(_entry(output_per_mtok=1e30)), "output_per_mtok is over 999,999,999"),
    ("negative.json", _json(_entry(input_per_mtok=-0.5)), "input_per_mtok is negative, got -0.5"),
    ("string.json", _json(_entry(input_per_mtok="2.5")), "input_per_mtok must be a number"),
    ("boolean.json", _json(_entry(output_per_mtok=True)), "output_per_mtok must be a number"),
    ("object.json", _json(_entry(input_per_mtok={"usd": 2})), "input_per_mtok must be a number"),
    ("aliases.json", _json(_entry(aliases="acme")), "aliases must be a list of strings"),
    ("alias.json", _json(_entry(aliases=["a\x00b"])), "aliases an alias holds a control"),
    ("provider.json", _json(_entry(provider=7)), "provider must be a string"),
    ("model-type.json", _json(_entry(model=7)), "entry 1: `model` must be a string"),
    ("no-model.json", _json(_entry(model=_GONE)), "entry 1: `model` must be a string"),
    ("no-input.json", _json(_entry(input_per_mtok=_GONE)), "input_per_mtok is required"),
    ("no-output.json", _json(_entry(output_per_mtok=_GONE)), "output_per_mtok is required"),
    ("no-date.json", _json(_entry(valid_from=_GONE)), "valid_from is required"),
    ("date-type.json", _json(_entry(valid_from=20260101)), "valid_from must be YYYY-MM-DD"),
    ("date.json", _json(_entry(valid_from="2026-13-01")), "valid_from must be YYYY-MM-DD"),
    ("year.json", _json(_entry(valid_from="2999-01-01")), "valid_from 2999-01-01 is outside"),
    ("no-day.yaml", GOOD_YAML.replace("2026-01-01", "2026-02-30").encode(), "not YAML we read"),
    (
        "datetime.yaml",
        GOOD_YAML.replace("2026-01-01", "2026-01-01T10:00:00Z").encode(),
        "valid_from must be YYYY-MM-DD",
    ),
    ("typo.json", _json(_entry(input_per_mtk=2)), "entry 1 (acme-coder): unknown field"),
    ("not-entry.json", _json(GOOD, "acme"), "entry 2: a price is an object, got 'acme'"),
    ("long-model.json", _json(_entry(model="m" * 201)), "`model` is longer than 200"),
    (
        "duplicate.json",
        _json(GOOD, _entry(model="ACME-coder")),
        "entry 2 (ACME-coder): the same model and valid_from (2026-01-01) as entry 1",
    ),
    ("empty.json", b"", "not JSON: "),
    ("empty.yaml", b"", "empty: no prices in it"),
    ("scalar.json", b"42", "a price file is a list of prices"),
    ("string.yaml", b"just words\n", "a price file is a list of prices"),
    ("mapping.json", b'{"about": "x"}', "a price file is a list of prices"),
    ("prices-scalar.json", b'{"prices": 5}', "a price file is a list of prices"),
    ("garbage.json", bytes(range(256)) * 4, "not JSON: "),
    ("garbage.yaml", bytes(range(256)) * 4, "not YAML: "),
    ("key.yaml", b"? [a, b]\n: 1\n", "not YAML: "),
    (
        "litellm-string.json",
        orjson.dumps({"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": "x"}}),
        "entry m: output_cost_per_token must be a number",
    ),
    (
        "litellm-name.json",
        orjson.dumps({"a\nb": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}}),
        "`model` holds a control character",
    ),
    (
        "litellm-over.json",
        orjson.dumps({"m": {"input_cost_per_token": 1e4, "output_cost_per_token": 1e-6}}),
        "entry m: input_cost_per_token is over 999,999,999.999999 USD per million tokens",
    ),
]


@pytest.mark.parametrize(("name", "content", "says"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_price_file_is_refused_with_one_line_and_nothing_saved(
    tmp_path: Path, db: None, name: str, content: bytes, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    before = ModelPrice.objects.count()
    with pytest.raises(CommandError) as refused:
        call_command("load_prices", str(path))
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(f"{path}: ")
    assert says in line
    assert ModelPrice.objects.count() == before


def test_a_litellm_entry_with_an_odd_mode_is_left_out_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "litellm.json"
    path.write_bytes(
        orjson.dumps(
            {
                "odd": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6, "mode": []},
                "ok": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
            }
        )
    )
    [row] = read_price_file(path, date(2026, 1, 1))
    assert (row.model, row.prices["output_per_mtok"]) == ("ok", 2)


def test_an_unreadable_file_is_refused_with_why(
    tmp_path: Path, db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.json"
    path.write_bytes(_json(GOOD))

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    # The suite runs as root, whom chmod does not stop: the read itself is made to fail.
    monkeypatch.setattr(Path, "read_bytes", refuse)
    with pytest.raises(CommandError, match=r"prices.json: cannot read it: Permission denied$"):
        call_command("load_prices", str(path))


def test_a_file_with_one_bad_entry_among_good_ones_saves_none(tmp_path: Path, db: None) -> None:
    path = tmp_path / "prices.json"
    path.write_bytes(_json(_entry(model="first"), _entry(model="second", output_per_mtok=-1)))
    with pytest.raises(CommandError, match="entry 2 \\(second\\): output_per_mtok is negative"):
        call_command("load_prices", str(path))
    assert not ModelPrice.objects.filter(model__in=["first", "second"]).exists()


def test_a_good_file_loads_again_unchanged(tmp_path: Path, db: None) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(GOOD_YAML)
    for _ in range(2):
        call_command("load_prices", str(path))
    row = ModelPrice.objects.get(model="acme-coder")
    assert (row.input_per_mtok, row.cached_input_per_mtok, row.output_per_mtok) == (2, 0.5, 8)
    assert (row.aliases, row.provider, row.valid_from) == (["acme"], "acme", date(2026, 1, 1))


# Random documents: JSON-like values, nested a few levels.
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["2026-01-01", "2026-02-30", "1969-12-31", "acme-coder", ""]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(
                st.sampled_from(sorted({*GOOD, *PRICE_FIELDS, "prices"})), st.text(max_size=8)
            ),
            inner,
            max_size=5,
        ),
    ),
    max_leaves=20,
)
# Mutations of a good entry: a field replaced by any value, or dropped, or a field added.
_MUTATED = st.lists(
    st.tuples(
        st.sampled_from(sorted({*GOOD, *PRICE_FIELDS, "extra"})), st.one_of(_VALUES, st.just(_GONE))
    ),
    min_size=1,
    max_size=3,
).map(lambda changes: [_entry(**dict(changes))])


def _text_edit(text: str, position: int, edit: str) -> str:
    position %= len(text) + 1
    return text[:position] + edit + text[position + 1 :]


_EDITED_YAML = st.builds(
    _text_edit,
    st.just(GOOD_YAML),
    st.integers(min_value=0, max_value=len(GOOD_YAML)),
    st.text(alphabet=string.printable + "\x00\u00e9", max_size=3),
)


def _serialised(document: object, as_yaml: bool) -> bytes:
    if as_yaml:
        return yaml.safe_dump(document).encode()
    return orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS)


def _check(path: Path) -> None:
    """Loaded whole (every row valid, saved and read back without a problem) or refused
    with one line starting with the file's path."""
    try:
        rows = read_price_file(path, date(2026, 1, 1))
    except ParameterError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{path}: ")
        return
    for row in rows:
        assert name_problem(row.model) is None
        assert all(price_problem(v) is None for v in row.prices.values() if v is not None)
    try:
        assert save_prices(rows, "property") == len(rows)
        assert PriceBook.load().problems == []
    finally:
        ModelPrice.objects.filter(source="property").delete()


_PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_PROPERTY
@given(document=st.one_of(_VALUES, _MUTATED), as_yaml=st.booleans())
def test_any_document_is_loaded_whole_or_refused_with_one_line(
    tmp_path: Path, db: None, document: object, as_yaml: bool
) -> None:
    try:
        content = _serialised(document, as_yaml)
    except (TypeError, ValueError, orjson.JSONEncodeError):
        return  # not writable in that format (NaN keys, huge integers): nothing to read
    path = tmp_path / ("prices.yaml" if as_yaml else "prices.json")
    path.write_bytes(content)
    _check(path)


@_PROPERTY
@given(text=_EDITED_YAML)
def test_any_edit_of_a_good_yaml_file_is_loaded_whole_or_refused_with_one_line(
    tmp_path: Path, db: None, text: str
) -> None:
    path = tmp_path / "prices.yaml"
    path.write_bytes(text.encode())
    _check(path)
