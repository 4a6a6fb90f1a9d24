"""Django-side records of serving ingestion: scrape targets and model KV configs.

Scrape targets are edited in the admin or by `manage.py add_scrape_target` and
`remove_scrape_target` (`scrape` registers nothing); the beat task scrapes every enabled
one on its interval. A model config (layers, KV heads,
head dim, dtype) turns KV-cache blocks into bytes on the instance page.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

# Instance names appear in URLs and labels: printable, no spaces or slashes.
INSTANCE_NAME = RegexValidator(r"^[A-Za-z0-9_.:@\-]+$", "letters, digits and _ . : @ - only")


class ScrapeTarget(models.Model):
    name = models.CharField(
        max_length=200, unique=True, validators=[INSTANCE_NAME], help_text="the instance name"
    )
    url = models.URLField(max_length=500, help_text="the /metrics URL")
    labels = models.JSONField(default=dict, blank=True, help_text='e.g. {"team": "infra"}')
    interval_seconds = models.PositiveIntegerField(
        default=15, validators=[MinValueValidator(1), MaxValueValidator(86400)]
    )
    timeout_seconds = models.FloatField(
        default=5.0, validators=[MinValueValidator(0.1), MaxValueValidator(60)]
    )
    enabled = models.BooleanField(default=True)
    team = models.ForeignKey(
        "analytics.Team",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="scrape_targets",
        help_text="who sees this instance (no team: only all-teams users)",
    )
    last_attempt_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        app_label = "ingest"  # defined there first (analytics/models.py says why)
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.url})"


class KvDtype(models.IntegerChoices):
    FP8 = 1, "fp8 / int8 (1 byte)"
    BF16 = 2, "bf16 / fp16 (2 bytes)"
    FP32 = 4, "fp32 (4 bytes)"


class ModelConfig(models.Model):
    """The attention shape of a served model, keyed by vLLM's `model_name` label."""

    model = models.CharField(max_length=300, unique=True)
    num_layers = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    num_kv_heads = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    head_dim = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    dtype_bytes = models.PositiveSmallIntegerField(choices=KvDtype.choices, default=KvDtype.BF16)

    class Meta:
        app_label = "ingest"  # defined there first (analytics/models.py says why)
        ordering = ["model"]

    def __str__(self) -> str:
        return self.model

    @property
    def kv_bytes_per_token(self) -> int:
        return kv_bytes_per_token(
            self.num_layers, self.num_kv_heads, self.head_dim, int(self.dtype_bytes)
        )


def kv_bytes_per_token(num_layers: int, num_kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """2 (K and V) x layers x KV heads x head dim x bytes per value."""
    return 2 * num_layers * num_kv_heads * head_dim * dtype_bytes
