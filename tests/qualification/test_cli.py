"""``farm qualify`` and ``farm qualification`` on the local executor."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from stored_blobs import overwrite_blob, stored_bytes
from typer.testing import CliRunner

from farm.cli import app as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


def _env(tmp_path: Path, database_url: str) -> dict[str, str]:
    return {
        "FARM_HOME": str(tmp_path / "farm"),
        "FARM_DATABASE_URL": database_url,
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_EXECUTOR": "local",
    }


def test_farm_qualify_qualifies_every_subject_and_the_board_shows_them(
    tmp_path: Path, database_url: str
) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "fleet")
    env = _env(tmp_path, database_url)
    result = CliRunner().invoke(cli, ["qualify", str(tmp_path / "fleet"), "--executor", "local"], env=env)
    assert result.exit_code == 0, result.output
    board = CliRunner().invoke(cli, ["qualification", "--json"], env=env)
    rows = json.loads(board.output)
    assert rows and {row["state"] for row in rows} == {"qualified"}
    assert all(row["current_evidence"] is not None for row in rows)


def test_an_unknown_subject_is_one_error_line_and_nothing_is_recorded(
    tmp_path: Path, database_url: str
) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "fleet")
    env = _env(tmp_path, database_url)
    result = CliRunner().invoke(cli, ["qualify", str(tmp_path / "fleet"), "no-such-cluster"], env=env)
    assert result.exit_code == 2
    assert "Error: subject no-such-cluster is not in catalog" in result.output
    board = CliRunner().invoke(cli, ["qualification", "--json"], env=env)
    assert json.loads(board.output) == []


def test_farm_verify_all_checks_qualification_statements_and_a_tampered_one_fails(
    tmp_path: Path, database_url: str
) -> None:
    from sqlalchemy import create_engine, select

    from farm.store.models import QualificationEvidence

    shutil.copytree(EXAMPLE, tmp_path / "fleet")
    env = _env(tmp_path, database_url)
    assert CliRunner().invoke(cli, ["qualify", str(tmp_path / "fleet")], env=env).exit_code == 0
    ok = CliRunner().invoke(cli, ["verify", "--all"], env=env)
    assert ok.exit_code == 0, ok.output
    assert "4 qualification statement(s) checked" in ok.output

    engine = create_engine(database_url)
    with engine.connect() as connection:
        digest = connection.scalars(select(QualificationEvidence.envelope_digest)).first()
    engine.dispose()
    stored = stored_bytes(tmp_path / "objects", digest)
    overwrite_blob(tmp_path / "objects", digest, stored.replace(b'"payload":"', b'"payload":"e'))
    bad = CliRunner().invoke(cli, ["verify", "--all"], env=env)
    assert bad.exit_code == 1
    assert "FAIL qualification.blob_unreadable: qualification " in bad.output
