"""Alembic migrations of the farm's schema. Run them with ``farm db upgrade`` (see farm/store/migrate.py)."""
