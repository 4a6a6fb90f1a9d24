"""Loads the list prices shipped in analytics/data/prices.json into a new database."""

from datetime import date
from typing import Any

from django.db import migrations


def load(apps: Any, schema_editor: Any) -> None:
    from analytics.costs.price_files import SHIPPED_PRICES, read_price_file

    model_price = apps.get_model("analytics", "ModelPrice")
    # The price fields this migration's model has; later migrations fill in their own.
    known = {f.name for f in model_price._meta.get_fields()}
    for row in read_price_file(SHIPPED_PRICES, date.today()):
        model_price.objects.get_or_create(
            model=row.model,
            valid_from=row.valid_from,
            defaults={
                **{name: value for name, value in row.prices.items() if name in known},
                "aliases": row.aliases,
                "provider": row.provider,
                "source": "shipped",
            },
        )


class Migration(migrations.Migration):
    dependencies = [("analytics", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
