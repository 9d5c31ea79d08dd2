"""``farm gc`` keeps what qualification runs stored: the requests of a value no fleet target
selects (its resolved ClusterProfile and envelope, and their descriptors) stay fetchable, so
``farm audit`` can re-render the qualification's targets and ``farm verify --all`` still passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from farm.cli import app as cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
INTERNAL_RULE = """    # The back office on prod-nginx sits behind the internal ingress class.
    - applications: ["catalog-api", "orders-worker"]
      clusters: ["prod-nginx"]
      profile: ingress-class=internal
"""


def _farm(env: dict[str, str], *args: str, status: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == status, result.output
    return result.output


def test_gc_after_qualifying_a_value_no_target_selects_keeps_its_requests_for_audit_and_verify(
    tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    fleet = (root / "fleet.yaml").read_text()
    assert INTERNAL_RULE in fleet
    (root / "fleet.yaml").write_text(fleet.replace(INTERNAL_RULE, ""))  # only qualification renders it
    env = {
        "FARM_HOME": str(tmp_path / "farm"),
        "FARM_DATABASE_URL": database_url,
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_EXECUTOR": "local",
    }
    subject = "prod-nginx:ingress-class=internal"
    _farm(env, "qualify", str(root), subject)
    again = json.loads(_farm(env, "qualify", str(root), subject, "--json"))  # every target cached
    run_id = again[0]["run_id"]

    swept = _farm(env, "gc", "--grace-seconds", "0")
    assert swept.endswith(", 0 row reference(s) to missing blobs, 0 removed\n"), swept

    audit = json.loads(_farm(env, "audit", "--run", run_id, "--all", "--json"))
    assert audit["targets"] and audit["counts"]["match"] == len(audit["targets"]), audit
    verify = _farm(env, "verify", "--all")
    assert "qualification statement(s) checked" in verify
