"""``farm verify --all`` recomputes each qualification state against the snapshot its transition
was derived from: a state the beat refreshed against a catalog no run rendered verifies clean, and
a forged state is still reported."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fleet.conftest import Catalog, fresh_render_children, make_catalog  # noqa: F401 - the fixture
from typer.testing import CliRunner, Result

from farm.catalog import load_catalog
from farm.cli import app as cli
from farm.evidence.keys import load_configured_trust
from farm.fleet.service import schedule_due_qualifications
from farm.settings import load_settings
from farm.store.context import open_storage

pytestmark = pytest.mark.timeout(600)


@dataclass
class SentQualifications:
    """Stands in for the Celery client the beat sends due subjects through."""

    sent: list[tuple[str, str, str]] = field(default_factory=list)

    def send_qualification(self, snapshot_digest: str, cluster: str, selection: str) -> None:
        self.sent.append((snapshot_digest, cluster, selection))


def _farm(*arguments: str, ok: tuple[int, ...] = (0,)) -> Result:
    result = CliRunner().invoke(cli, list(arguments))
    assert result.exit_code in ok, result.output
    return result


@pytest.fixture
def beat_refreshed_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A home whose subject was qualified under snapshot A, then refreshed by the beat against a
    catalog B (its ClusterProfile changed) that no run rendered: the subject is stale against B.
    Returns the home and B's digest."""
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    catalog: Catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    _farm("run", str(catalog.root), "--processes", "1")
    _farm("qualify", str(catalog.root), "--executor", "local")
    catalog.write_cluster("cluster-a", ingress_class="traefik")
    changed = load_catalog(catalog.root)
    storage = open_storage(load_settings())
    try:
        trusted = frozenset(load_configured_trust(storage.settings))
        sender = SentQualifications()
        due = schedule_due_qualifications(storage, changed, trusted, sender, source=str(catalog.root))
    finally:
        storage.close()
    assert due == [("cluster-a", "")] and sender.sent == [(changed.digest, "cluster-a", "")]
    return tmp_path / "home", changed.digest


def _subject(home: Path) -> sqlite3.Row:
    with sqlite3.connect(home / "farm.db") as connection:
        connection.row_factory = sqlite3.Row
        return connection.execute("SELECT * FROM qualification_subjects").fetchone()


def test_a_state_the_beat_refreshed_against_a_catalog_no_run_rendered_verifies_clean(
    beat_refreshed_home: tuple[Path, str],
) -> None:
    home, _ = beat_refreshed_home
    assert (_subject(home)["state"], _subject(home)["reason"]) == ("stale", "digest_drift")
    result = CliRunner().invoke(cli, ["verify", "--all"])
    assert result.exit_code == 0, result.output
    assert "1 qualification state(s) checked" in result.output


def test_a_forged_state_of_a_subject_the_beat_refreshed_is_reported_against_the_snapshot_it_names(
    beat_refreshed_home: tuple[Path, str],
) -> None:
    home, _ = beat_refreshed_home
    with sqlite3.connect(home / "farm.db") as connection:
        connection.execute("UPDATE qualification_subjects SET state = 'qualified', reason = ''")
    result = CliRunner().invoke(cli, ["verify", "--all"])
    assert result.exit_code == 1, result.output
    assert (
        "FAIL qualification.state_mismatch: qualification subject cluster-a:none" in result.output
        and "the row says 'qualified' ''; recomputed from its records it is 'stale' 'digest_drift'"
        in result.output
    ), result.output


def test_each_transition_of_a_qualification_names_the_snapshot_it_was_derived_against(
    beat_refreshed_home: tuple[Path, str],
) -> None:
    home, changed = beat_refreshed_home
    with sqlite3.connect(home / "farm.db") as connection:
        events = connection.execute(
            "SELECT cause, to_state, snapshot_digest FROM qualification_events ORDER BY id"
        ).fetchall()
        first = connection.execute(
            "SELECT snapshot_digest FROM fleet_runs ORDER BY created_at LIMIT 1"
        ).fetchone()[0]
    assert events[-1] == ("beat", "stale", changed)
    assert all(snapshot == first for cause, _, snapshot in events[:-1]), events
    assert {cause for cause, _, _ in events[:-1]} >= {"qualified"}, events


def test_a_manifest_head_is_every_member_of_the_manifest_but_its_targets(tmp_path: Path) -> None:
    from farm.catalog.snapshot import manifest_head

    snapshot = load_catalog(make_catalog(tmp_path / "catalog", apps=2, clusters=("targets", "b")).root)
    content = json.loads(snapshot.manifest)
    assert len(content["targets"]) == 4
    assert manifest_head(snapshot.manifest) == {
        name: value for name, value in content.items() if name != "targets"
    }
