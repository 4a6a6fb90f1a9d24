"""The price table's own bounds, which the admin applies: the same range and aliases as
price files and POST /api/prices."""

from datetime import date
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from analytics.costs.models import MTOK_PRICE_MAX, ModelPrice, price_problem


def _row(**change: object) -> ModelPrice:
    fields: dict[str, object] = {
        "model": "acme-coder",
        "input_per_mtok": Decimal(2),
        "output_per_mtok": Decimal(8),
        "valid_from": date(2026, 1, 1),
        **change,
    }
    return ModelPrice(**fields)


def test_the_range_is_zero_to_just_under_a_billion_per_million_tokens() -> None:
    assert MTOK_PRICE_MAX == Decimal("999999999.999999")
    assert price_problem(Decimal(0)) is None
    assert price_problem(MTOK_PRICE_MAX) is None
    assert price_problem(Decimal("1000000000")) == (
        "is over 999,999,999.999999 USD per million tokens"
    )
    assert price_problem(Decimal("-0.000001")) == "is negative"
    assert price_problem(Decimal("NaN")) == "is not a finite number"


def test_the_admin_refuses_a_price_past_the_range(db: None) -> None:
    _row(cached_input_per_mtok=MTOK_PRICE_MAX).full_clean()
    with pytest.raises(ValidationError) as refused:
        _row(cached_input_per_mtok=Decimal("1000000000")).full_clean()
    assert list(refused.value.message_dict) == ["cached_input_per_mtok"]


@pytest.mark.parametrize("aliases", [{"a": 1}, ["ok", 3], ["a\x00"], "acme"])
def test_the_admin_refuses_aliases_that_are_not_a_list_of_names(db: None, aliases: object) -> None:
    with pytest.raises(ValidationError) as refused:
        _row(aliases=aliases).full_clean()
    assert list(refused.value.message_dict) == ["aliases"]
