"""The fleet fixtures (a small catalog, farm settings on a fresh database on both databases)."""

from fleet.conftest import catalog, fleet_env  # noqa: F401 - fixtures shared with tests/fleet
