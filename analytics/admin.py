"""Admin for cost reporting: prices, GPU prices, teams and budgets, report recipients,
and the (read-only) record of every report delivery attempt; for alerting: channels, and
the (read-only) notifications and their delivery attempts."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from analytics.alerts.models import Channel, DeliveryAttempt, Notification
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


@admin.register(Channel)
class ChannelAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "target", "enabled", "failing_since")
    list_filter = ("kind", "enabled")
    search_fields = ("name", "target")
    readonly_fields = ("failing_since", "last_error")


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    extra = 0
    can_delete = False
    fields = ("attempted_at", "ok", "permanent", "duration_ms", "error")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "kind", "alert", "channel", "status", "attempts", "sent_at")
    list_filter = ("status", "kind", "channel")
    list_select_related = ("alert__rule", "channel")
    inlines = [DeliveryAttemptInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(DeliveryAttempt)
class DeliveryAttemptAdmin(admin.ModelAdmin):
    list_display = ("attempted_at", "notification", "ok", "permanent", "duration_ms", "error")
    list_filter = ("ok", "permanent")
    list_select_related = ("notification__alert__rule", "notification__channel")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
