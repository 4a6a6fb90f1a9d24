from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "analytics"

    def ready(self) -> None:
        from analytics.tokens.vocabularies import prepare_offline

        # tiktoken must never download: its vocabularies come verified from packages.
        prepare_offline()
