"""Tampering with what binds targets and cache rows to signed outputs fails ``farm verify --all``.

An embedded home after good runs (a fleet run, then a run after a catalog change) is copied fresh
for each tamper; ``farm verify --all`` must exit 1 naming the row and the check. The untouched
home verifies clean.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet.conftest import fresh_render_children, make_catalog  # noqa: F401 - the fixture
from sqlalchemy import event, text
from typer.testing import CliRunner, Result

from farm.cli import app as cli
from farm.evidence.keys import load_configured_trust
from farm.settings import load_settings
from farm.store import audit
from farm.store.context import open_storage


@pytest.fixture(scope="module")
def good_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An embedded home after a fleet run and a run after one application changed."""
    root = tmp_path_factory.mktemp("good")
    catalog = make_catalog(root / "catalog", apps=3, clusters=("cluster-a", "cluster-b"))
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("FARM_"):
                patch.delenv(name)
        patch.setenv("FARM_HOME", str(root / "home"))
        for _ in range(2):
            result = CliRunner().invoke(cli, ["run", str(catalog.root), "--processes", "1"])
            assert result.exit_code == 0, result.output
            catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    yield root / "home"


@pytest.fixture
def home(good_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the good home, configured as the embedded default."""
    copy = tmp_path / "home"
    shutil.copytree(good_home, copy)
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(copy))
    return copy


def verify_all() -> Result:
    return CliRunner().invoke(cli, ["verify", "--all"])


def database(home: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(home / "farm.db")
    connection.row_factory = sqlite3.Row
    return connection


def latest_targets(connection: sqlite3.Connection) -> list[sqlite3.Row]:
    run_id = connection.execute("SELECT id FROM fleet_runs ORDER BY id DESC LIMIT 1").fetchone()[0]
    return connection.execute(
        "SELECT * FROM render_targets WHERE run_id = ? ORDER BY application, cluster_profile", (run_id,)
    ).fetchall()


def name(row: sqlite3.Row) -> str:
    return f"target {row['application']}/{row['cluster_profile']} ({row['id']}) of run {row['run_id']}"


def verify_run(run_id: str) -> Result:
    return CliRunner().invoke(cli, ["verify", "--run", run_id])


def test_an_untouched_home_after_good_runs_verifies_clean(home: Path) -> None:
    result = verify_all()
    assert result.exit_code == 0, result.output
    assert ", 0 failure(s)" in result.output
    with database(home) as connection:
        runs = [row[0] for row in connection.execute("SELECT id FROM fleet_runs")]
    assert len(runs) == 2
    for run_id in runs:
        result = verify_run(run_id)
        assert result.exit_code == 0, result.output
        assert ", 0 failure(s)" in result.output


def test_two_cache_hits_swapped_fail_verify_of_their_run_naming_both_rows(home: Path) -> None:
    """A no-change target's row names an output it did not render, and the index of the rows
    naming an output holds only the rows that rendered it: ``--run`` binds the run's cache hits."""
    columns = ("output_digest", "action_key", "request_digest", "request_pack")
    with database(home) as connection:
        targets = latest_targets(connection)
        first = next(row for row in targets if row["application"] == "app-0")
        second = next(row for row in targets if row["application"] == "app-2")
        assert (first["state"], second["state"]) == ("cached", "cached")
        for row, other in ((first, second), (second, first)):
            connection.execute(
                f"UPDATE render_targets SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                (*(other[c] for c in columns), row["id"]),
            )
    result = verify_run(first["run_id"])
    assert result.exit_code == 1, result.output
    for row, other in ((first, second), (second, first)):
        assert f"FAIL binding.target_mismatch: output {other['output_digest']}: {name(row)}" in result.output
    assert result.output.count("FAIL") == 2, result.output


def test_a_cache_hit_whose_request_digest_alone_was_changed_fails_verify_of_its_run(home: Path) -> None:
    with database(home) as connection:
        row = next(row for row in latest_targets(connection) if row["state"] == "cached")
        connection.execute("UPDATE render_targets SET request_digest = ? WHERE id = ?", ("f" * 64, row["id"]))
    for result in (verify_run(row["run_id"]), verify_all()):
        assert result.exit_code == 1, result.output
        assert f"FAIL binding.target_mismatch: output {row['output_digest']}: {name(row)}" in result.output
        assert f"request digest (row '{'f' * 64}'" in result.output


def test_swapping_the_whole_binding_of_two_targets_of_different_applications_fails_naming_both_rows(
    home: Path,
) -> None:
    columns = ("output_digest", "action_key", "request_digest", "request_pack")
    with database(home) as connection:
        targets = latest_targets(connection)
        first = next(row for row in targets if row["application"] == "app-0")
        second = next(row for row in targets if row["application"] == "app-2")
        assert (first["state"], second["state"]) == ("cached", "cached")  # bound from the rows' side
        for row, other in ((first, second), (second, first)):
            connection.execute(
                f"UPDATE render_targets SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                (*(other[c] for c in columns), row["id"]),
            )
    result = verify_all()
    assert result.exit_code == 1, result.output
    for row, other in ((first, second), (second, first)):
        assert f"FAIL binding.target_mismatch: output {other['output_digest']}: {name(row)}" in result.output
    assert "application (row 'app-0', signed 'app-2')" in result.output


def test_an_action_cache_row_pointed_at_another_output_and_its_evidence_fails_naming_the_key(
    home: Path,
) -> None:
    with database(home) as connection:
        entries = connection.execute("SELECT * FROM action_cache ORDER BY action_key").fetchall()
        victim, other = (
            entries[0],
            next(e for e in entries if e["output_digest"] != entries[0]["output_digest"]),
        )
        connection.execute(
            "UPDATE action_cache SET output_digest = ?, evidence_id = ? WHERE action_key = ?",
            (other["output_digest"], other["evidence_id"], victim["action_key"]),
        )
    result = verify_all()
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL binding.cache_mismatch: output {other['output_digest']}: action cache entry"
        f" {victim['action_key']} points at evidence {other['evidence_id']}" in result.output
    )


def test_an_action_cache_row_pointed_at_another_output_keeping_its_evidence_fails_naming_the_key(
    home: Path,
) -> None:
    with database(home) as connection:
        entries = connection.execute("SELECT * FROM action_cache ORDER BY action_key").fetchall()
        victim, other = (
            entries[0],
            next(e for e in entries if e["output_digest"] != entries[0]["output_digest"]),
        )
        connection.execute(
            "UPDATE action_cache SET output_digest = ? WHERE action_key = ?",
            (other["output_digest"], victim["action_key"]),
        )
    result = verify_all()
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL evidence.not_linked: output {other['output_digest']}: action key {victim['action_key']}"
        in result.output
    )


def test_a_succeeded_target_turned_failed_fails_naming_the_row(home: Path) -> None:
    with database(home) as connection:
        row = latest_targets(connection)[0]
        connection.execute(
            "UPDATE render_targets SET state = 'failed', error_code = 'render.error' WHERE id = ?",
            (row["id"],),
        )
    result = verify_all()
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL target.state_mismatch: {name(row)}: state 'failed' with error 'render.error'" in result.output
    )


def test_verify_of_a_run_names_its_target_turned_failed_and_its_state_the_targets_do_not_derive(
    home: Path,
) -> None:
    with database(home) as connection:
        row = next(row for row in latest_targets(connection) if row["output_digest"] is not None)
        connection.execute(
            "UPDATE render_targets SET state = 'failed', error_code = 'render.error' WHERE id = ?",
            (row["id"],),
        )
        cached = latest_targets(connection)[1]
        connection.execute(
            "UPDATE render_targets SET state = 'cached', error_code = 'render.error', output_digest = NULL"
            " WHERE id = ?",
            (cached["id"],),
        )
    result = verify_run(row["run_id"])
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL target.state_mismatch: {name(row)}: state 'failed' with error 'render.error'" in result.output
    )
    assert (
        f"FAIL target.state_mismatch: {name(cached)}: cached failure 'render.error', but the failure cache"
        " holds nothing" in result.output
    )
    assert (
        f"FAIL run.state_mismatch: run {row['run_id']}: the row says 'completed'; its targets (2 failed,"
        " 0 still open) say 'completed_with_failures'" in result.output
    )


def test_a_target_turned_into_a_cached_failure_the_failure_cache_does_not_hold_fails_naming_the_row(
    home: Path,
) -> None:
    with database(home) as connection:
        row = latest_targets(connection)[0]
        connection.execute(
            "UPDATE render_targets SET state = 'cached', error_code = 'policy.refused', output_digest = NULL"
            " WHERE id = ?",
            (row["id"],),
        )
    result = verify_all()
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL target.state_mismatch: {name(row)}: cached failure 'policy.refused', but the failure cache"
        " holds nothing" in result.output
    )


def test_a_succeeded_target_whose_output_was_cleared_fails_naming_the_row(home: Path) -> None:
    with database(home) as connection:
        row = latest_targets(connection)[0]
        connection.execute("UPDATE render_targets SET output_digest = NULL WHERE id = ?", (row["id"],))
    result = verify_all()
    assert result.exit_code == 1, result.output
    assert f"FAIL target.output_missing: {name(row)}:" in result.output


def test_an_output_s_rendered_rows_are_found_through_the_partial_index_and_cache_hits_are_not_in_it(
    home: Path,
) -> None:
    """The index the output checks read holds only rows that rendered (a no-change run's rows add
    no entry), and SQLite uses a partial index only when the query states its condition literally."""
    storage = open_storage(load_settings())
    statements: list[str] = []

    def capture(_conn, _cursor, statement, _parameters, _context, _many) -> None:  # noqa: ANN001
        if "FROM render_targets" in statement:
            statements.append(statement)

    try:
        with storage.sessions() as session:
            digest = session.scalar(text("SELECT output_digest FROM render_targets WHERE state = 'cached'"))
            event.listen(storage.engine, "before_cursor_execute", capture)
            try:
                assert (
                    audit.verify_output(
                        session, storage.objects, load_configured_trust(storage.settings), digest
                    )
                    == []
                )
            finally:
                event.remove(storage.engine, "before_cursor_execute", capture)
    finally:
        storage.close()
    assert len(statements) == 1, statements
    with database(home) as connection:
        plan = " ".join(
            row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {statements[0]}", ["x" * 64])
        )
        assert "USING INDEX ix_render_targets_rendered_output" in plan, plan
        (index,) = connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'ix_render_targets_rendered_output'"
        ).fetchone()
    assert index.endswith("WHERE state = 'succeeded'"), index
