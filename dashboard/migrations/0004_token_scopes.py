"""Tokens gain a scope, an expiry and revocation. Tokens issued before could do all their
user's role allows: they keep that (scope admin); new tokens default to read."""

from django.db import migrations, models


def keep_old_tokens_whole(apps, schema_editor):
    apps.get_model("dashboard", "ApiToken").objects.update(scope="admin")


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0003_preference"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="expires_at",
            field=models.DateTimeField(blank=True, help_text="empty: never", null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="revoked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="apitoken",
            name="scope",
            field=models.CharField(
                choices=[("ingest", "ingest"), ("read", "read"), ("admin", "admin")],
                default="read",
                help_text="ingest: send data only; read: read only; admin: all the user's role allows",
                max_length=10,
            ),
        ),
        migrations.RunPython(keep_old_tokens_whole, migrations.RunPython.noop),
    ]
