"""Roles, teams' members, the audit log, failed logins, and a team on rules, channels and
report recipients. Accounts made before could see and change everything: each keeps that
as an editor of all teams (superusers are admins anyway); accounts made later start as
viewers in no team."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def keep_old_accounts_working(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Access = apps.get_model("analytics", "Access")
    for user in User.objects.filter(access__isnull=True):
        Access.objects.create(user=user, role="editor", all_teams=True)


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0009_price_range"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="LoginFailure",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ("username", models.CharField(db_index=True, max_length=150)),
                ("address", models.CharField(db_index=True, max_length=64)),
            ],
            options={
                "ordering": ["-at"],
            },
        ),
        migrations.AddField(
            model_name="alertrule",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="whose rule: it watches only that team's runs and instances (no team: all)",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="alert_rules",
                to="analytics.team",
            ),
        ),
        migrations.AddField(
            model_name="channel",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="who sees and edits this channel (no team: only all-teams users)",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="channels",
                to="analytics.team",
            ),
        ),
        migrations.AddField(
            model_name="reportrecipient",
            name="team",
            field=models.ForeignKey(
                blank=True,
                help_text="receives only this team's report (no team: the whole fleet's)",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="report_recipients",
                to="analytics.team",
            ),
        ),
        migrations.CreateModel(
            name="Access",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "role",
                    models.CharField(
                        choices=[("viewer", "viewer"), ("editor", "editor"), ("admin", "admin")],
                        default="viewer",
                        max_length=10,
                    ),
                ),
                (
                    "all_teams",
                    models.BooleanField(
                        default=False, help_text="sees every team's data (admins always do)"
                    ),
                ),
                (
                    "teams",
                    models.ManyToManyField(blank=True, related_name="members", to="analytics.team"),
                ),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="access",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "access",
                "verbose_name_plural": "access",
            },
        ),
        migrations.CreateModel(
            name="AuditEntry",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                (
                    "username",
                    models.CharField(blank=True, help_text="kept if the user goes", max_length=150),
                ),
                ("action", models.CharField(max_length=20)),
                ("kind", models.CharField(max_length=40)),
                ("object_id", models.CharField(blank=True, max_length=64)),
                ("object_repr", models.CharField(blank=True, max_length=300)),
                ("changes", models.JSONField(blank=True, default=dict)),
                (
                    "team",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="analytics.team",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "audit entry",
                "verbose_name_plural": "audit log",
                "ordering": ["-at", "-id"],
            },
        ),
        migrations.RunPython(keep_old_accounts_working, migrations.RunPython.noop),
    ]
