"""URL map: pages, the JSON API under /api/, the admin and login."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import metrics, otlp
from dashboard.api import api
from dashboard.login import FleetscopeLoginView, protect_admin_login
from dashboard.pages import alerts as alerts_pages
from dashboard.pages import costs as costs_pages
from dashboard.pages import overview as overview_pages
from dashboard.pages import people as people_pages
from dashboard.pages import runs as views
from dashboard.pages import serving as serving_pages
from dashboard.pages import serving_views, settings_audit, settings_teams, settings_users
from dashboard.pages import settings as settings_pages
from dashboard.pages import tokens as tokens_pages
from dashboard.pages.run_agent import run_agent, run_agent_timeline_chart
from dashboard.pages.run_events import run_events
from dashboard.pages.run_replay import run_replay
from dashboard.pages.runs_list import runs_list
from dashboard.preferences import set_time_zone
from dashboard.staticfiles import favicon

protect_admin_login(admin.site)  # before admin.site.urls reads its login view

urlpatterns = [
    path("", runs_list, name="runs"),
    # OTLP/HTTP's standard paths (docs/otlp.md), token-authenticated, no trailing slash.
    path("v1/logs", otlp.logs, name="otlp-logs"),
    path("v1/metrics", otlp.metrics, name="otlp-metrics"),
    path("v1/traces", otlp.traces, name="otlp-traces"),
    path(
        "runs/<path:run>/charts/commit-rate.json",
        views.run_commit_rate_chart,
        name="run-commit-rate-chart",
    ),
    path(
        "runs/<path:run>/charts/error-rate.json",
        views.run_error_rate_chart,
        name="run-error-rate-chart",
    ),
    path(
        "runs/<path:run>/charts/serving-kv.json",
        views.run_serving_kv_chart,
        name="run-serving-kv-chart",
    ),
    path(
        "runs/<path:run>/charts/serving-preemptions.json",
        views.run_serving_preemptions_chart,
        name="run-serving-preemptions-chart",
    ),
    # Before `run` and the replay: an agent's page is never read as a run's name (the run ends at the
    # last /agents/; either may hold a `/`).
    path(
        "runs/<path:run>/agents/<path:agent>/timeline.json",
        run_agent_timeline_chart,
        name="run-agent-timeline-chart",
    ),
    path("runs/<path:run>/agents/<path:agent>/", run_agent, name="run-agent"),
    path("runs/<path:run>/replay/", run_replay, name="run-replay"),
    path("runs/<path:run>/events/", run_events, name="run-events"),
    path("runs/<path:run>/", views.run_detail, name="run"),
    path("tokens/", tokens_pages.tokens_page, name="tokens"),
    path("tokens/charts/tax.json", tokens_pages.tax_chart, name="tokens-tax-chart"),
    path("tokens/charts/traffic.json", tokens_pages.traffic_chart, name="tokens-traffic-chart"),
    path("costs/", costs_pages.costs_page, name="costs"),
    path("costs/report.csv", costs_pages.costs_csv, name="costs-csv"),
    path("costs/charts/<slug:name>.json", costs_pages.costs_chart, name="costs-chart"),
    path("people/", people_pages.people_page, name="people"),
    path("people/<path:person>/", people_pages.person_page, name="person"),
    path("overview/", overview_pages.overview_page, name="overview"),
    path("overview/chart.json", overview_pages.overview_chart, name="overview-chart"),
    path("serving/", serving_pages.serving_overview, name="serving"),
    path("serving/charts/<slug:name>.json", serving_pages.fleet_chart, name="serving-fleet-chart"),
    path(
        "serving/instance/charts/<slug:name>.json",
        serving_pages.instance_chart,
        name="serving-chart",
    ),
    path("serving/fleet/", serving_views.fleet_view, name="serving-fleet"),
    path("serving/kv-cache/", serving_views.kv_cache_view, name="serving-kv-cache"),
    path("serving/spec-decode/", serving_views.spec_decode_view, name="serving-spec-decode"),
    path("serving/lengths/", serving_views.lengths_view, name="serving-lengths"),
    path("serving/slo/", serving_views.slo_view, name="serving-slo"),
    path(
        "serving/views/charts/<slug:name>.json",
        serving_views.view_chart,
        name="serving-view-chart",
    ),
    path("serving/model-config/", serving_pages.save_model_config, name="serving-model-config"),
    path(
        "serving/instance/<path:instance>/", serving_pages.serving_instance, name="serving-instance"
    ),
    path("alerts/", alerts_pages.alerts_page, name="alerts"),
    path("alerts/silences/", alerts_pages.add_silence, name="alerts-silence"),
    path(
        "alerts/silences/<int:silence_id>/end/",
        alerts_pages.end_silence,
        name="alerts-silence-end",
    ),
    path("alerts/rules/new/", alerts_pages.rule_editor, name="alerts-rule-new"),
    path("alerts/rules/preview.json", alerts_pages.preview_chart, name="alerts-preview-chart"),
    path("alerts/rules/<int:rule_id>/", alerts_pages.rule_editor, name="alerts-rule"),
    path(
        "alerts/rules/<int:rule_id>/enabled/",
        alerts_pages.set_rule_enabled,
        name="alerts-rule-enabled",
    ),
    path("settings/", settings_pages.settings_index, name="settings"),
    path("settings/tokens/", settings_pages.tokens_page, name="settings-tokens"),
    path("settings/users/", settings_users.users_page, name="settings-users"),
    path("settings/users/<int:user_id>/", settings_users.user_edit, name="settings-user"),
    path("settings/teams/", settings_teams.teams_page, name="settings-teams"),
    path("settings/teams/<int:team_id>/", settings_teams.team_edit, name="settings-team"),
    path(
        "settings/teams/<int:team_id>/delete/",
        settings_teams.team_delete,
        name="settings-team-delete",
    ),
    path("settings/audit/", settings_audit.audit_page, name="settings-audit"),
    path("accounts/login/", FleetscopeLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("preferences/time-zone/", set_time_zone, name="time-zone"),
    path("favicon.ico", favicon, name="favicon"),
    # Fleetscope's own figures for Prometheus (dashboard/metrics.py): a token or a login.
    path("metrics", metrics.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
]
