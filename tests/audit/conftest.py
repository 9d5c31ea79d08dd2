"""The fleet fixtures (a small catalog, farm settings on a fresh database on both databases)."""

from fleet.conftest import catalog, fleet_env, fresh_render_children  # noqa: F401 - shared with tests/fleet
