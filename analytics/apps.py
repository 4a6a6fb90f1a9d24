from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"

    def ready(self) -> None:
        from analytics.access import audit
        from analytics.tokens.vocabularies import prepare_offline

        # Every change to a setting is recorded, whichever door it came in by.
        audit.connect()

        # tiktoken must never download: its vocabularies come verified from packages.
        prepare_offline()
