"""Admin for scrape targets and model KV configs."""

from django.contrib import admin

from analytics.serving.models import ModelConfig, ScrapeTarget


@admin.register(ScrapeTarget)
class ScrapeTargetAdmin(admin.ModelAdmin):
    list_display = ("name", "url", "team", "interval_seconds", "enabled", "last_attempt_at")
    list_filter = ("enabled", "team")
    search_fields = ("name", "url")
    readonly_fields = ("last_attempt_at", "created_at")


@admin.register(ModelConfig)
class ModelConfigAdmin(admin.ModelAdmin):
    list_display = ("model", "num_layers", "num_kv_heads", "head_dim", "dtype_bytes")
    search_fields = ("model",)
