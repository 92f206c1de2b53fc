"""The Django recipe of docs/orms.md, run with the Django installed.

Connects with libpq's environment (PGHOST, PGPORT, PGDATABASE, PGUSER) to a
database where uidgen is created and uidgen.worker_id is set, runs the
recipe app's migrations (test/orm/django_recipe_app), creates rows through
the ORM and prints one JSON object of facts that test/t/170_orm_recipes.pl
checks.  Works with Django 3.2 (Debian 12) and 4.2 (Debian 13).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

settings.configure(
    DATABASES={"default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "postgres"),
        "USER": os.environ.get("PGUSER", ""),
        "HOST": os.environ.get("PGHOST", ""),
        "PORT": os.environ.get("PGPORT", ""),
    }},
    INSTALLED_APPS=["django_recipe_app"],
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    USE_TZ=True,
)
django.setup()

from django.core.management import call_command
from django.db import connection

from django_recipe_app.models import Document, Line, Order


def scalar(sql):
    """The first column of the first row of sql."""
    with connection.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def main():
    facts = {"django": django.get_version()}
    call_command("migrate", "django_recipe_app", verbosity=0)
    facts["orders_default"] = scalar(
        "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
        "WHERE adrelid = 'django_recipe_app_order'::regclass")
    facts["orders_identity"] = scalar(
        "SELECT attidentity FROM pg_attribute WHERE attrelid = 'django_recipe_app_order'::regclass "
        "AND attname = 'id'")
    facts["documents_default"] = scalar(
        "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
        "WHERE adrelid = 'django_recipe_app_document'::regclass")
    facts["line_fk_types"] = scalar(
        "SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attname) "
        "FROM pg_attribute WHERE attrelid = 'django_recipe_app_line'::regclass "
        "AND attname IN ('order_id', 'document_id')")
    old_max = scalar("SELECT max(id) FROM django_recipe_app_order")
    orders = [Order.objects.create(item="order %d" % i) for i in range(50)]
    docs = [Document.objects.create(title="doc %d" % i) for i in range(50)]
    lines = [Line.objects.create(order=o, document=d) for o, d in zip(orders, docs)]
    order_ids = [o.id for o in orders]
    doc_ids = [d.id for d in docs]
    facts["worker_id"] = int(scalar("SELECT current_setting('uidgen.worker_id')"))
    facts["orders_workers"] = scalar(
        "SELECT array_agg(DISTINCT snowflake_worker(id)) FROM django_recipe_app_order "
        "WHERE item LIKE 'order %'")
    facts["orders_ids_read_back"] = all(isinstance(i, int) and i > 0 for i in order_ids)
    facts["orders_increasing"] = order_ids == sorted(set(order_ids))
    facts["orders_new_above_old"] = min(order_ids) > old_max
    facts["orders_old_max"] = old_max
    facts["documents_uuid_version_7"] = all(d.version == 7 for d in doc_ids)
    facts["documents_increasing"] = doc_ids == sorted(set(doc_ids))
    facts["lines_read_back"] = Line.objects.filter(
        order_id__in=order_ids, document_id__in=doc_ids).count() == len(lines)
    facts["reload_same_key"] = Order.objects.get(pk=order_ids[0]).item == "order 0"
    json.dump(facts, sys.stdout, default=str)
    print()


if __name__ == "__main__":
    main()
