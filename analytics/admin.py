"""Admin for cost reporting: prices, GPU prices, teams and budgets, report recipients,
and the (read-only) record of every report delivery attempt."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from analytics.models import GpuPrice, ModelPrice, ReportDelivery, ReportRecipient, Team


@admin.register(ModelPrice)
class ModelPriceAdmin(admin.ModelAdmin):
    list_display = (
        "model",
        "valid_from",
        "input_per_mtok",
        "cached_input_per_mtok",
        "cache_write_per_mtok",
        "output_per_mtok",
        "provider",
        "source",
    )
    list_filter = ("provider", "source")
    search_fields = ("model",)


@admin.register(GpuPrice)
class GpuPriceAdmin(admin.ModelAdmin):
    list_display = ("target", "gpus", "usd_per_gpu_hour", "valid_from")


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "run_patterns", "source_patterns", "daily_budget_usd")


@admin.register(ReportRecipient)
class ReportRecipientAdmin(admin.ModelAdmin):
    list_display = ("kind", "target", "enabled")


@admin.register(ReportDelivery)
class ReportDeliveryAdmin(admin.ModelAdmin):
    list_display = ("attempted_at", "report_date", "kind", "target", "ok", "error")
    list_filter = ("ok", "kind")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
