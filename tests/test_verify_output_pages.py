"""``farm verify --all`` checks outputs a keyset page at a time; each output gets exactly the
failures ``farm verify --output`` gives it, on SQLite and on PostgreSQL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fleet.conftest import fresh_render_children, make_catalog  # noqa: F401 - the fixture
from sqlalchemy import text
from typer.testing import CliRunner

from farm.cli import app as cli
from farm.evidence.keys import load_configured_trust
from farm.settings import load_settings
from farm.store import audit
from farm.store.context import open_storage
from farm.store.db import create_farm_engine

pytestmark = pytest.mark.timeout(600)


def test_checking_outputs_a_page_at_a_time_gives_each_output_the_failures_check_output_gives(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FARM_DATABASE_URL", database_url)
    catalog = make_catalog(tmp_path / "catalog", apps=3, clusters=("cluster-a", "cluster-b"))
    result = CliRunner().invoke(cli, ["run", str(catalog.root), "--processes", "1"])
    assert result.exit_code == 0, result.output
    engine = create_farm_engine(database_url)
    with engine.begin() as connection:
        outputs = [
            row[0] for row in connection.execute(text("SELECT digest FROM render_outputs ORDER BY digest"))
        ]
        moved = connection.execute(
            text("SELECT id FROM render_targets WHERE output_digest = :digest ORDER BY id LIMIT 1"),
            {"digest": outputs[0]},
        ).scalar_one()
        connection.execute(
            text("UPDATE render_targets SET cluster_profile = 'cluster-x' WHERE id = :id"), {"id": moved}
        )
        connection.execute(
            text("UPDATE render_outputs SET size_bytes = size_bytes + 1 WHERE digest = :digest"),
            {"digest": outputs[-1]},
        )
    engine.dispose()
    assert len(outputs) >= 3  # two pages of two at least

    storage = open_storage(load_settings())
    try:
        trusted = load_configured_trust(storage.settings)
        with storage.sessions() as session:
            paged = dict(audit.check_every_output(session, storage.objects, trusted, page=2))
            one_by_one = {
                digest: audit.verify_output(session, storage.objects, trusted, digest) for digest in outputs
            }
    finally:
        storage.close()
    assert paged == one_by_one
    assert [failure.code for failure in paged[outputs[0]]] == ["binding.target_mismatch"]
    assert f"({moved})" in paged[outputs[0]][0].message
    assert [failure.code for failure in paged[outputs[-1]]] == ["output.size_mismatch"]
    assert all(paged[digest] == [] for digest in outputs[1:-1])
