"""Alembic revisions of the store's schema (a package so it ships inside the wheel)."""
