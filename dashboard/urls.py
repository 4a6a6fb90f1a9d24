"""URL map: pages, the JSON API under /api/, the admin and login."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import views
from dashboard.api import api
from dashboard.pages import tokens as tokens_pages

urlpatterns = [
    path("", views.runs_list, name="runs"),
    path("runs/<path:run>/", views.run_detail, name="run"),
    path("tokens/", tokens_pages.tokens_page, name="tokens"),
    path("tokens/charts/tax.json", tokens_pages.tax_chart, name="tokens-tax-chart"),
    path("tokens/charts/traffic.json", tokens_pages.traffic_chart, name="tokens-traffic-chart"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", api.urls),
]
