"""Admin registrations for the dashboard's own records."""

from django.contrib import admin

from dashboard.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "last_used_at")
    readonly_fields = ("prefix", "token_hash", "created_at", "last_used_at")
