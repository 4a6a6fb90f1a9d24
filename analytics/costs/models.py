"""Django-side records of cost reporting: the price table, teams with budgets, report
recipients and every delivery attempt.

Prices are USD per million tokens and valid from a date (UTC), so a price change adds a
row and never rewrites history. The range a price may take (`price_problem`) and what
aliases are (`aliases_problem`) are written here once: the fields' validators (the admin),
price files and POST /api/prices all check them. Token data itself stays in the warehouse.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import BaseValidator, MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from lib import http
from lib.bounds import name_problem

_NON_NEGATIVE = [MinValueValidator(Decimal(0))]
# Digits the price columns hold before their 6 decimal places (wider than the range below,
# so a row written before the range existed still reads back).
MTOK_PRICE_INTEGER_DIGITS = 18
# The range of a model price, USD per million tokens, whichever door it comes in by (the
# API, a price file, the admin): 15 significant digits, what SQLite's REAL reads back
# exactly, and times a count under lib.bounds.COUNT_LIMIT (10^18) at most 10^27 USD per
# million, far inside a float. No real price comes near (the dearest is under 1,000).
MTOK_PRICE_MAX = Decimal("999999999.999999")
_MTOK_PRICE_BOUNDS = [MinValueValidator(Decimal(0)), MaxValueValidator(MTOK_PRICE_MAX)]


def price_problem(value: Decimal) -> str | None:
    """Why `value` is not a model price (one line), or None: the range above."""
    if not value.is_finite():
        return "is not a finite number"
    if value < 0:
        return "is negative"
    if value > MTOK_PRICE_MAX:
        return f"is over {MTOK_PRICE_MAX:,} USD per million tokens"
    return None


def aliases_problem(value: object) -> str | None:
    """Why `value` is not a price row's aliases (one line), or None: a list of names."""
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        return "must be a list of strings"
    for alias in value:
        problem = name_problem(alias, "an alias")
        if problem:
            return problem
    return None


def validate_aliases(value: object) -> None:
    problem = aliases_problem(value)
    if problem:
        raise ValidationError(f"aliases {problem}")


# The price fields of a ModelPrice row, USD per million tokens.
PRICE_FIELDS = (
    "input_per_mtok",
    "cached_input_per_mtok",
    "cache_write_per_mtok",
    "cache_write_1h_per_mtok",
    "output_per_mtok",
    "long_input_per_mtok",
    "long_cached_input_per_mtok",
    "long_cache_write_per_mtok",
    "long_cache_write_1h_per_mtok",
    "long_output_per_mtok",
    "fast_input_per_mtok",
    "fast_cached_input_per_mtok",
    "fast_cache_write_per_mtok",
    "fast_cache_write_1h_per_mtok",
    "fast_output_per_mtok",
)


def _price_field(
    help_text: str,
    *,
    null: bool = False,
    integer_digits: int = 6,
    validators: Sequence[BaseValidator] = _NON_NEGATIVE,
) -> models.DecimalField[Decimal, Decimal]:
    return models.DecimalField(
        max_digits=integer_digits + 6,
        decimal_places=6,
        null=null,
        blank=null,
        validators=list(validators),
        help_text=help_text,
    )


def _mtok_price(help_text: str, *, null: bool = False) -> models.DecimalField[Decimal, Decimal]:
    return _price_field(
        help_text,
        null=null,
        integer_digits=MTOK_PRICE_INTEGER_DIGITS,
        validators=_MTOK_PRICE_BOUNDS,
    )


class ModelPrice(models.Model):
    """List prices of one model from `valid_from` on (until a later row for it)."""

    model = models.CharField(max_length=200, help_text="canonical name, e.g. claude-haiku-4-5")
    aliases = models.JSONField(
        default=list,
        blank=True,
        validators=[validate_aliases],
        help_text='other names, e.g. ["claude-3-5-haiku-latest"]',
    )
    provider = models.CharField(max_length=100, blank=True)
    input_per_mtok = _mtok_price("USD per million uncached input tokens")
    cached_input_per_mtok = _mtok_price(
        "USD per million cache-read tokens (empty: the input price)", null=True
    )
    cache_write_per_mtok = _mtok_price(
        "USD per million cache-write tokens, 5-minute lifetime (empty: the input price)",
        null=True,
    )
    # Empty: twice the input price, the provider's multiplier for a 1-hour write (the
    # 5-minute price would under-count it by 0.75 of the input price per token).
    cache_write_1h_per_mtok = _mtok_price(
        "USD per million cache-write tokens, 1-hour lifetime (empty: twice the input price)",
        null=True,
    )
    output_per_mtok = _mtok_price("USD per million output tokens")
    # Long-context tier: calls whose whole prompt (input + cache reads + cache writes)
    # exceeds LONG_CONTEXT_TOKENS (200,000, the tier Anthropic and Google price) use these.
    # The whole call is billed in the tier, cache writes included.
    long_input_per_mtok = _mtok_price("long-context input price (empty: no tier)", null=True)
    long_cached_input_per_mtok = _mtok_price("long-context cache-read price", null=True)
    long_cache_write_per_mtok = _mtok_price(
        "long-context 5-minute cache-write price (empty: the long-context input price)",
        null=True,
    )
    long_cache_write_1h_per_mtok = _mtok_price(
        "long-context 1-hour cache-write price (empty: twice the long-context input price)",
        null=True,
    )
    long_output_per_mtok = _mtok_price("long-context output price", null=True)
    # Fast mode (`usage.speed: "fast"`): the same model served faster at a multiple of its
    # prices. An empty fast price is the standard one times the fast multiplier (fast
    # input over input); fast calls past LONG_CONTEXT_TOKENS pay the long-context prices
    # times it (the provider's modifiers stack).
    fast_input_per_mtok = _mtok_price(
        "fast-mode input price (empty: no fast mode, fast calls at the standard prices)",
        null=True,
    )
    fast_cached_input_per_mtok = _mtok_price("fast-mode cache-read price", null=True)
    fast_cache_write_per_mtok = _mtok_price("fast-mode 5-minute cache-write price", null=True)
    fast_cache_write_1h_per_mtok = _mtok_price("fast-mode 1-hour cache-write price", null=True)
    fast_output_per_mtok = _mtok_price("fast-mode output price", null=True)
    valid_from = models.DateField(help_text="first UTC day these prices apply")
    source = models.CharField(max_length=200, blank=True, help_text="where the prices came from")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model", "-valid_from"]
        constraints = [
            models.UniqueConstraint(fields=["model", "valid_from"], name="one_price_per_model_day")
        ]

    def __str__(self) -> str:
        return f"{self.model} from {self.valid_from}"


class Team(models.Model):
    """A set of runs or sources (shell-style patterns, e.g. `browser-*`, or a log folder
    `/logs/infra/*`) with an optional daily budget."""

    name = models.CharField(max_length=100, unique=True)
    run_patterns = models.JSONField(
        default=list, blank=True, help_text='run names or patterns, e.g. ["browser-*", "solver-2"]'
    )
    source_patterns = models.JSONField(
        default=list,
        blank=True,
        help_text='log files the events came from, e.g. ["/logs/infra/*"]',
    )
    daily_budget_usd = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, validators=_NON_NEGATIVE
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RecipientKind(models.TextChoices):
    EMAIL = "email", "e-mail"
    WEBHOOK = "webhook", "Slack-compatible webhook"


class ReportRecipient(models.Model):
    """Where the daily cost report goes: an e-mail address or a webhook URL."""

    kind = models.CharField(max_length=20, choices=RecipientKind.choices)
    target = models.CharField(max_length=500, help_text="an e-mail address or a webhook URL")
    enabled = models.BooleanField(default=True)
    team = models.ForeignKey(
        Team,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="report_recipients",
        help_text="receives only this team's report (no team: the whole fleet's)",
    )

    class Meta:
        ordering = ["kind", "target"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "target"], name="one_recipient_per_target")
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.target}"

    def clean(self) -> None:
        """A webhook must be http(s) to a public address, as an alert channel's (checked
        again when sent, after DNS resolution: lib/http.py)."""
        if self.kind != RecipientKind.WEBHOOK:
            return
        try:
            http.check_public_url(
                self.target, allow_private=settings.FLEETSCOPE_ALLOW_PRIVATE_WEBHOOKS
            )
        except http.InvalidURL as exc:
            raise ValidationError({"target": str(exc)}) from None


class ReportDelivery(models.Model):
    """One attempt to send one day's report to one recipient, with its outcome."""

    report_date = models.DateField()
    kind = models.CharField(max_length=20, choices=RecipientKind.choices)
    target = models.CharField(max_length=500)
    ok = models.BooleanField()
    error = models.TextField(blank=True)
    attempted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-attempted_at"]
        verbose_name = "report delivery"
        verbose_name_plural = "report deliveries"

    def __str__(self) -> str:
        outcome = "sent" if self.ok else "failed"
        return f"{self.report_date} to {self.target}: {outcome}"


class GpuPrice(models.Model):
    """What a self-hosted serving target costs: GPUs times a price per GPU-hour, keyed by
    the scrape target's instance name, from `valid_from` on."""

    target = models.CharField(max_length=200, help_text="the scrape target's instance name")
    gpus = models.PositiveIntegerField(default=1, validators=[MinValueValidator(1)])
    usd_per_gpu_hour = _price_field("USD per GPU-hour")
    valid_from = models.DateField(help_text="first UTC day this price applies")

    class Meta:
        ordering = ["target", "-valid_from"]
        verbose_name = "GPU price"
        verbose_name_plural = "GPU prices"
        constraints = [
            models.UniqueConstraint(fields=["target", "valid_from"], name="one_gpu_price_per_day")
        ]

    def __str__(self) -> str:
        return f"{self.target}: {self.gpus} x {self.usd_per_gpu_hour} USD/GPU-h"
