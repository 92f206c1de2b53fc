"""The tables, as Django makes them (bigserial before 4.1, identity after)."""
from django.db import migrations, models

import django_recipe_app.models


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.CreateModel(
            name="Order",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("item", models.TextField()),
            ],
        ),
        migrations.CreateModel(
            name="Document",
            fields=[
                ("id", django_recipe_app.models.UUIDv7AutoField(primary_key=True, serialize=False)),
                ("title", models.TextField()),
            ],
        ),
        migrations.CreateModel(
            name="Line",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("order", models.ForeignKey(on_delete=models.CASCADE, to="django_recipe_app.order")),
                ("document", models.ForeignKey(on_delete=models.CASCADE, to="django_recipe_app.document")),
            ],
        ),
        # rows from before the conversion, with the bigserial/identity key
        migrations.RunSQL("INSERT INTO django_recipe_app_order (item) "
                          "SELECT 'old ' || i FROM generate_series(1, 100) i"),
    ]
