"""Django-side records of cost reporting: the price table, teams with budgets, report
recipients and every delivery attempt.

Prices are USD per million tokens and valid from a date (UTC), so a price change adds a
row and never rewrites history. Token data itself stays in the warehouse.
"""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone

_NON_NEGATIVE = [MinValueValidator(Decimal(0))]
# Digits of a model price before its 6 decimal places: no real price comes near, and a
# price file's entry past it is refused with its name (price_files), never cut.
MTOK_PRICE_INTEGER_DIGITS = 18


def _price_field(
    help_text: str, *, null: bool = False, integer_digits: int = 6
) -> models.DecimalField[Decimal, Decimal]:
    return models.DecimalField(
        max_digits=integer_digits + 6,
        decimal_places=6,
        null=null,
        blank=null,
        validators=_NON_NEGATIVE,
        help_text=help_text,
    )


def _mtok_price(help_text: str, *, null: bool = False) -> models.DecimalField[Decimal, Decimal]:
    return _price_field(help_text, null=null, integer_digits=MTOK_PRICE_INTEGER_DIGITS)


class ModelPrice(models.Model):
    """List prices of one model from `valid_from` on (until a later row for it)."""

    model = models.CharField(max_length=200, help_text="canonical name, e.g. claude-haiku-4-5")
    aliases = models.JSONField(
        default=list, blank=True, help_text='other names, e.g. ["claude-3-5-haiku-latest"]'
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

    class Meta:
        ordering = ["kind", "target"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "target"], name="one_recipient_per_target")
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.target}"


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
