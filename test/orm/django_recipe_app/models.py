"""The models of docs/orms.md's Django recipe."""
from django.db import models


class UUIDv7AutoField(models.fields.AutoFieldMixin, models.UUIDField):
    """A uuid primary key the database assigns (DEFAULT uuidv7_next())."""

    def get_internal_type(self):
        return "UUIDField"

    def rel_db_type(self, connection):
        return "uuid"


class Order(models.Model):
    """Snowflake key: bigserial or identity at first, then snowflake_next()."""
    id = models.BigAutoField(primary_key=True)
    item = models.TextField()


class Document(models.Model):
    """UUIDv7 key."""
    id = UUIDv7AutoField(primary_key=True)
    title = models.TextField()


class Line(models.Model):
    """A foreign key to each."""
    order = models.ForeignKey(Order, on_delete=models.CASCADE)
    document = models.ForeignKey(Document, on_delete=models.CASCADE)
