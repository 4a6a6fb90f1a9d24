from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    verbose_name = "Fleetscope"

    def ready(self) -> None:
        from dashboard.celery import setup_from_django

        setup_from_django()
