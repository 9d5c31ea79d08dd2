"""The fleet fixtures (a small catalog, farm settings on a fresh database on both databases)."""

from fleet.conftest import (  # noqa: F401 - shared with tests/fleet
    catalog,
    chart_repository,
    fleet_env,
    fresh_render_children,
)
