"""Alert rules gain admission_rejections (vLLM 0.32+'s refused requests, rules/signals.py)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0011_rule_kinds_vllm_signals"),
    ]

    operations = [
        migrations.AlterField(
            model_name="alertrule",
            name="kind",
            field=models.CharField(
                choices=[
                    ("preemption_rate", "Preemption rate"),
                    ("kv_usage", "KV-cache usage"),
                    ("commit_stall", "Commit stall"),
                    ("commit_decay", "Commit-rate decay"),
                    ("error_drift", "Error-rate drift"),
                    ("target_down", "Scrape target down"),
                    ("daily_spend", "Daily spend"),
                    ("waiting_capacity", "Requests waiting for KV capacity"),
                    ("spec_acceptance", "Speculative-decoding acceptance"),
                    ("slo_attainment", "SLO attainment"),
                    ("engine_asleep", "Engine asleep"),
                    ("corrupted_requests", "Corrupted requests"),
                    ("admission_rejections", "Admission rejections"),
                ],
                max_length=30,
            ),
        ),
    ]
