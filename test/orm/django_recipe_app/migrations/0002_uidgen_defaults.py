"""docs/orms.md's migration: uidgen's defaults on the two keys."""
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("django_recipe_app", "0001_initial")]
    operations = [
        migrations.RunSQL("SELECT convert_to_snowflake('django_recipe_app_order', 'id')"),
        migrations.RunSQL("ALTER TABLE django_recipe_app_document ALTER COLUMN id SET DEFAULT uuidv7_next()"),
    ]
