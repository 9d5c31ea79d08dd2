"""``farm run`` and qualification: a run whose catalog changed a ClusterProfile, declaration or
value marks the subjects whose evidence is no longer current stale (FARM_QUALIFICATION_ON_RUN),
and ``requalify`` qualifies them again. Driven through the CLI on a copy of ``examples/fleet``,
whose ``prod-nginx`` declares ``ingress-class`` with the values ``public`` and ``internal``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, select
from typer.testing import CliRunner

from farm.cli import app as cli
from farm.store.models import QualificationEvent, QualificationSubject

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
PUBLIC = ("prod-nginx", "ingress-class=public")
INTERNAL = ("prod-nginx", "ingress-class=internal")


def _env(tmp_path: Path, database_url: str, on_run: str | None = None) -> dict[str, str]:
    env = {
        "FARM_HOME": str(tmp_path / "farm"),
        "FARM_DATABASE_URL": database_url,
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_EXECUTOR": "local",
    }
    if on_run is not None:
        env["FARM_QUALIFICATION_ON_RUN"] = on_run
    return env


def _farm(env: dict[str, str], *args: str, status: int | None = 0) -> str:
    result = CliRunner().invoke(cli, list(args), env=env)
    if status is not None:
        assert result.exit_code == status, result.output
    return result.output


def _board(env: dict[str, str]) -> dict[tuple[str, str], dict]:
    rows = json.loads(_farm(env, "qualification", "--json"))
    return {(row["cluster"], row["selection"]): row for row in rows}


def _events(database_url: str) -> list[tuple[str, str, str, str, str]]:
    """(cluster, selection, from, to, cause) of every qualification event, in order."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                select(
                    QualificationSubject.cluster_profile,
                    QualificationSubject.selection,
                    QualificationEvent.from_state,
                    QualificationEvent.to_state,
                    QualificationEvent.cause,
                )
                .join(QualificationSubject, QualificationSubject.id == QualificationEvent.subject_id)
                .order_by(QualificationEvent.id)
            )
            return [tuple(row) for row in rows]
    finally:
        engine.dispose()


def _fleet(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _qualify_everything(env: dict[str, str], root: Path) -> dict[tuple[str, str], dict]:
    _farm(env, "qualify", str(root), "--executor", "local")
    board = _board(env)
    assert PUBLIC in board and INTERNAL in board
    assert {row["state"] for row in board.values()} == {"qualified"}
    return board


def test_editing_one_values_fragment_makes_only_that_value_stale_after_a_run_and_requalifying_it_qualifies_it(
    tmp_path: Path, database_url: str
) -> None:
    env = _env(tmp_path, database_url)  # the default: FARM_QUALIFICATION_ON_RUN=stale
    root = _fleet(tmp_path)
    before = _qualify_everything(env, root)

    _edit(root / "profiles" / "prod-nginx-ingress.yaml", "nginx-internal", "nginx-private")
    _farm(env, "run", str(root), "--json")
    board = _board(env)
    assert (board[INTERNAL]["state"], board[INTERNAL]["reason"]) == ("stale", "digest_drift")
    assert board[INTERNAL]["current_evidence"] is None
    others = {subject: row for subject, row in board.items() if subject != INTERNAL}
    assert {row["state"] for row in others.values()} == {"qualified"}
    assert all(
        row["current_evidence"] == before[subject]["current_evidence"] for subject, row in others.items()
    )
    assert [event for event in _events(database_url) if event[4] == "fleet run"] == [
        (*INTERNAL, "qualified", "stale", "fleet run")
    ]

    output = _farm(env, "qualify", str(root), "prod-nginx:ingress-class=internal")
    assert output == f"prod-nginx:ingress-class=internal: qualified run {output.split()[-1]}\n"
    after = _board(env)
    assert after[INTERNAL]["state"] == "qualified"
    assert after[INTERNAL]["current_evidence"] not in (None, before[INTERNAL]["current_evidence"])
    assert {row["state"] for row in after.values()} == {"qualified"}


def test_a_run_after_a_new_owned_path_marks_every_value_stale_for_an_ownership_change(
    tmp_path: Path, database_url: str
) -> None:
    env = _env(tmp_path, database_url)
    root = _fleet(tmp_path)
    _qualify_everything(env, root)
    declaration = root / "profiles" / "prod-nginx-ingress.yaml"
    for value in ("nginx", "nginx-internal"):  # both values now also own certificate's issuer kind
        _edit(
            declaration,
            f"ingressClassName: {value}}}}}\n",
            f"ingressClassName: {value}}}}}\n        certificate: {{rendering: {{issuerRef: {{kind: ClusterIssuer}}}}}}\n",
        )
    _farm(env, "run", str(root), "--json", status=None)
    board = _board(env)
    assert (board[PUBLIC]["state"], board[PUBLIC]["reason"]) == ("stale", "ownership_change")
    assert (board[INTERNAL]["state"], board[INTERNAL]["reason"]) == ("stale", "ownership_change")


def test_requalify_on_run_qualifies_the_subjects_the_run_made_stale(
    tmp_path: Path, database_url: str
) -> None:
    env = _env(tmp_path, database_url, "requalify")
    root = _fleet(tmp_path)
    before = _qualify_everything(env, root)
    _edit(root / "clusters" / "prod-nginx.yaml", "letsencrypt-prod", "letsencrypt-other")
    _farm(env, "run", str(root), "--json")
    board = _board(env)
    assert {row["state"] for row in board.values()} == {"qualified"}
    for subject in (PUBLIC, INTERNAL):
        assert board[subject]["current_evidence"] != before[subject]["current_evidence"]
        transitions = [(e[2], e[3], e[4]) for e in _events(database_url) if e[:2] == subject]
        assert ("qualified", "stale", "fleet run") in transitions
        assert transitions[-1][1] == "qualified"
    untouched = [subject for subject in board if subject[0] != "prod-nginx"]
    assert all(
        board[subject]["current_evidence"] == before[subject]["current_evidence"] for subject in untouched
    )


def test_off_leaves_the_board_as_it_was_after_a_run(tmp_path: Path, database_url: str) -> None:
    env = _env(tmp_path, database_url, "off")
    root = _fleet(tmp_path)
    before = _qualify_everything(env, root)
    events = _events(database_url)
    _edit(root / "clusters" / "prod-nginx.yaml", "letsencrypt-prod", "letsencrypt-other")
    _farm(env, "run", str(root), "--json")
    assert _board(env) == before
    assert _events(database_url) == events


def test_an_unknown_on_run_setting_is_one_error_line_naming_it(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(tmp_path / "farm"), "FARM_QUALIFICATION_ON_RUN": "sometimes"}
    result = subprocess.run(
        [sys.executable, "-m", "farm", "run", str(_fleet(tmp_path))],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == (
        "Error: invalid farm settings: FARM_QUALIFICATION_ON_RUN: Input should be 'off', 'stale' or 'requalify'\n"
    )
