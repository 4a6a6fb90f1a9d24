"""Admin for cost reporting: prices, GPU prices, teams and budgets, report recipients,
and the (read-only) record of every report delivery attempt; for alerting: rules (checked
as the API checks them), channels, silences, and the (read-only) alert states with their
transitions, evaluations, notifications and delivery attempts."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from analytics.alerts.models import (
    AlertRule,
    AlertState,
    Channel,
    DeliveryAttempt,
    Evaluation,
    Notification,
    Silence,
    Transition,
)
from analytics.costs.models import GpuPrice, ModelPrice, ReportDelivery, ReportRecipient, Team


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


class AlertRuleForm(forms.ModelForm):
    """The admin checks a rule as the API and the page do (one-line reasons)."""

    class Meta:
        model = AlertRule
        fields = (
            "name",
            "kind",
            "scope",
            "threshold",
            "for_seconds",
            "params",
            "channels",
            "repeat_seconds",
            "enabled",
        )

    def clean(self) -> dict[str, Any]:
        # Imported here: Django loads every admin module when it starts, and the rules with
        # the facts and queries they import cost each management command ~0.2 s of CPU.
        from analytics.alerts.rules import RuleError, build_rule

        data = super().clean() or {}
        try:
            build_rule(
                data.get("kind", ""),
                data.get("threshold"),
                data.get("scope") or {},
                data.get("params") or {},
                data.get("for_seconds") or 0,
            )
        except RuleError as exc:
            raise forms.ValidationError(str(exc)) from None
        return data


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    form = AlertRuleForm
    list_display = ("name", "kind", "scope", "threshold", "for_seconds", "enabled")
    list_filter = ("kind", "enabled")
    search_fields = ("name",)
    filter_horizontal = ("channels",)


class TransitionInline(admin.TabularInline):
    model = Transition
    extra = 0
    can_delete = False
    fields = ("at", "from_state", "to_state", "value", "summary", "evaluation")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(AlertState)
class AlertStateAdmin(admin.ModelAdmin):
    list_display = ("rule", "subject", "state", "since", "value", "evaluated_at")
    list_filter = ("state", "rule__kind")
    list_select_related = ("rule",)
    search_fields = ("subject", "rule__name")
    inlines = [TransitionInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ("rule", "subject", "starts_at", "ends_at", "comment", "created_by")
    list_select_related = ("rule", "created_by")


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("at", "started_at", "duration_ms", "rules", "subjects", "transitions")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
