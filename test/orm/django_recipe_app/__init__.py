"""The Django app of docs/orms.md's recipe (test/orm/django_recipe.py)."""
