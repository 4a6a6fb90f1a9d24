"""Loads the list prices shipped in analytics/data/prices.json into a new database."""

from datetime import date
from typing import Any

from django.db import migrations


def load(apps: Any, schema_editor: Any) -> None:
    from analytics.costs.price_files import SHIPPED_PRICES, read_price_file

    model_price = apps.get_model("analytics", "ModelPrice")
    for row in read_price_file(SHIPPED_PRICES, date.today()):
        model_price.objects.get_or_create(
            model=row.model,
            valid_from=row.valid_from,
            defaults={
                **row.prices,
                "aliases": row.aliases,
                "provider": row.provider,
                "source": "shipped",
            },
        )


class Migration(migrations.Migration):
    dependencies = [("analytics", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
