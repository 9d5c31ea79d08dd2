"""The Celery fixtures of tests/fleet/test_celery.py (a real Redis, real workers), for the
compose topology's tests here."""

from fleet.test_celery import celery_farm, farm_source, redis_broker  # noqa: F401
