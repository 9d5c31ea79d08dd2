"""Shared pytest configuration. Fixture modules are listed here as plugins."""

pytest_plugins = ["conftest_store"]
