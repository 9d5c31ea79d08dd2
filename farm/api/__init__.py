"""The farm's HTTP face: one FastAPI application serving the JSON API (and, later, the dashboard).

Each resource is one router module under ``farm/api/routers``; adding a resource is adding a module
and one line in ``ROUTERS``.
"""

from __future__ import annotations

from farm.api.app import create_app

__all__ = ["create_app"]
