"""``farm audit`` on SQLite and PostgreSQL: re-render cached targets, compare with the signed
digests, sign an audit record that ``farm verify --all`` checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chart_repository import ChartRepository
from fleet.conftest import Catalog, FleetEnv, helm_environment, make_catalog, write_helm_app
from sqlalchemy import select
from typer.testing import CliRunner

import farm.audit.service as audit_module
from farm.audit.service import MATCH, STOPPED, run_audit
from farm.build.bounded import RENDER_MEMORY, RENDER_TIMEOUT
from farm.build.fetch import FORGED_ACTION_KEY
from farm.catalog import load_catalog
from farm.cli import app
from farm.core import registry
from farm.evidence.audit_record import AUDIT_PREDICATE_TYPE
from farm.evidence.dsse import parse_envelope, sign_envelope
from farm.evidence.statement import parse_statement
from farm.fleet.jobs import run_job
from farm.fleet.planner import plan_run
from farm.store import models
from farm.store.audit_records import all_audit_records

from . import counter_plugin, hostile_plugin

COUNTER_APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: counter
  namespace: shop
spec:
  components:
    - name: counter
      type: audit-counter
      properties: {}
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return make_catalog(tmp_path / "catalog", apps=3)


def _run(env: FleetEnv, catalog: Catalog) -> str:
    planned = plan_run(env.storage, load_catalog(catalog.root), source="tests")
    for job_id, key in planned.queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)
    return planned.run_id


def _cli(env: FleetEnv, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env.environ())
    return result.exit_code, result.stdout, result.stderr


def _counter_catalog(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(counter_plugin, "COUNTER_FILE", catalog.root.parent / "render-counter")
    monkeypatch.setitem(registry.COMPONENT_TYPES, counter_plugin.TYPE, f"{counter_plugin.__name__}:HANDLER")
    folder = catalog.root / "applications" / "counter"
    folder.mkdir(parents=True)
    (folder / "app.yaml").write_text(COUNTER_APP)


def test_a_clean_audit_signs_a_record_that_verify_accepts(fleet_env: FleetEnv, catalog: Catalog) -> None:
    run_id = _run(fleet_env, catalog)
    code, out, _ = _cli(fleet_env, "audit", "--all")
    assert code == 0, out
    assert f"of run {run_id}: 8 match, 0 drift, 0 nondeterministic, 0 refused" in out
    with fleet_env.storage.sessions() as session:
        (record,) = all_audit_records(session)
    statement = parse_statement(parse_envelope(fleet_env.storage.objects.get(record.envelope_digest)).payload)
    assert statement.predicate_type == AUDIT_PREDICATE_TYPE
    assert statement.predicate["run"] == run_id
    assert {t["verdict"] for t in statement.predicate["targets"]} == {MATCH}
    assert all(t["expected"] == t["observed"] for t in statement.predicate["targets"])
    code, out, _ = _cli(fleet_env, "verify", "--all")
    assert code == 0, out
    assert "1 audit record(s) checked" in out


def _tamper(env: FleetEnv, change: str) -> None:
    """Replace the stored audit envelope by a changed one, pointing the row at the new blob."""
    with env.storage.sessions() as session:
        (record,) = all_audit_records(session)
        data = env.storage.objects.get(record.envelope_digest)
        envelope = json.loads(data)
        if change == "payload":
            statement = parse_statement(parse_envelope(data).payload)
            body = statement.to_json()
            body["predicate"]["targets"][0]["verdict"] = "nondeterminism"
            envelope["payload"] = sign_envelope(json.dumps(body).encode(), env.signer).to_json()["payload"]
        elif change == "signature":
            signature = envelope["signatures"][0]["sig"]
            envelope["signatures"][0]["sig"] = ("B" if signature[0] != "B" else "C") + signature[1:]
        else:
            statement = parse_statement(parse_envelope(data).payload).to_json()
            statement["predicateType"] = "https://slsa.dev/provenance/v1"
            envelope = sign_envelope(json.dumps(statement).encode(), env.signer).to_json()
        record.envelope_digest = env.storage.objects.put(json.dumps(envelope).encode())
        session.commit()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("payload", "signature.invalid"),
        ("signature", "signature.invalid"),
        ("predicate", "audit.predicate_type"),
    ],
)
def test_a_tampered_audit_record_fails_verify_with_a_named_failure(
    fleet_env: FleetEnv, catalog: Catalog, change: str, code: str
) -> None:
    _run(fleet_env, catalog)
    assert _cli(fleet_env, "audit", "--sample", "2")[0] == 0
    _tamper(fleet_env, change)
    exit_code, out, _ = _cli(fleet_env, "verify", "--all")
    assert exit_code == 1
    assert f"FAIL {code}: audit " in out


def test_a_forced_nondeterminism_is_caught_with_its_diff(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    _counter_catalog(catalog, monkeypatch)
    _run(fleet_env, catalog)
    code, out, err = _cli(fleet_env, "audit", "--all")
    assert code == 1
    assert "3 nondeterministic" in out
    assert "Error: nondeterminism in counter@cluster-a" in err
    removed = {line for line in out.splitlines() if line.startswith("-  render:")}
    added = {line for line in out.splitlines() if line.startswith("+  render:")}
    assert removed == {f'-  render: "{n}"' for n in (0, 1, 2)}  # the signed renders of the run
    assert added == {f'+  render: "{n}"' for n in (3, 4, 5)}  # the audit's renders
    assert "+++ rendered/" in out and "--- signed/" in out


def test_a_different_core_version_is_reported_as_drift(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    _counter_catalog(catalog, monkeypatch)
    _run(fleet_env, catalog)
    monkeypatch.setattr(audit_module, "core_version", lambda: "9.9.9+upgraded")
    code, out, _ = _cli(fleet_env, "audit", "--all")
    assert code == 0, out
    assert "drift counter@cluster-b" in out
    assert "8 match, 3 drift, 0 nondeterministic, 0 refused" in out
    assert _cli(fleet_env, "audit", "--all", "--fail-on-drift")[0] == 1


def test_sampling_with_a_seed_is_reproducible(fleet_env: FleetEnv, catalog: Catalog) -> None:
    run_id = _run(fleet_env, catalog)

    def picked(seed: int) -> list[str]:
        report = run_audit(fleet_env.storage, fleet_env.signer, run_id, size=3, seed=seed)
        return [t.target_id for t in report.targets]

    assert picked(7) == picked(7)
    assert len(picked(7)) == 3
    assert {tuple(picked(seed)) for seed in range(6)} != {tuple(picked(7))}


@pytest.mark.parametrize("seed", [str(2**31), "9" * 20])
def test_a_seed_the_audit_record_cannot_hold_is_refused_before_anything_is_rendered(
    fleet_env: FleetEnv, catalog: Catalog, seed: str
) -> None:
    # the record's seed column is a 32-bit integer: PostgreSQL refused 2**31 after every sampled
    # target was rendered, and a 20-digit seed raised an OverflowError traceback on SQLite
    _run(fleet_env, catalog)
    result = CliRunner().invoke(app, ["audit", "--sample", "2", "--seed", seed], env=fleet_env.environ())
    assert result.exit_code == 2, result.output
    assert "--seed" in result.output and "Traceback" not in result.output
    with fleet_env.storage.sessions() as session:
        assert session.scalars(select(models.AuditRecord)).all() == []


def test_an_audit_with_nothing_recorded_is_one_error_line(fleet_env: FleetEnv) -> None:
    code, _, err = _cli(fleet_env, "audit")
    assert code == 1
    assert err.startswith("Error: no run is recorded yet")
    assert "Traceback" not in err


def test_a_target_whose_stored_request_was_swapped_is_refused_not_rendered(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    run_id = _run(fleet_env, catalog)
    with fleet_env.storage.sessions() as session:
        # two targets of one application (app-0's), whose requests share a request pack: the swapped
        # request is found, and its action key is not the target's (in no order, PostgreSQL could
        # return two applications' targets, whose packs do not hold each other's requests)
        first, second = session.scalars(
            select(models.RenderTarget)
            .where(models.RenderTarget.run_id == run_id)
            .order_by(models.RenderTarget.application, models.RenderTarget.cluster_profile)
            .limit(2)
        )
        assert first.application == second.application
        first.request_digest = second.request_digest
        session.commit()
    code, out, err = _cli(fleet_env, "audit", "--all")
    assert code == 1
    assert "7 match, 0 drift, 0 nondeterministic, 1 refused" in out
    assert f"the stored request cannot be audited: {FORGED_ACTION_KEY}: " in err


def test_an_audit_renders_a_helm_template_target_with_the_helm_on_path_and_finds_it_matching(
    fleet_env: FleetEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chart_repository: ChartRepository
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    write_helm_app(catalog, "charted", chart_repository.url)
    for name, value in helm_environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    run_id = _run(fleet_env, catalog)
    chart_repository.stop()  # the audit re-renders from the stored chart archive, not the network
    code, out, _ = _cli(fleet_env, "audit", "--all")
    assert code == 0, out
    assert f"of run {run_id}: 2 match, 0 drift, 0 nondeterministic, 0 refused" in out


HOSTILE_APP = COUNTER_APP.replace("name: counter", "name: hostile").replace(
    "audit-counter", hostile_plugin.TYPE
)


@pytest.mark.parametrize(
    ("mode", "bound", "code", "message"),
    [
        ("loop", {"FARM_RENDER_TIMEOUT_SECONDS": "1"}, RENDER_TIMEOUT, "the render took longer than 1 s"),
        ("grow", {"FARM_RENDER_MEMORY_MIB": "32"}, RENDER_MEMORY, "the render needed more than 32 MiB"),
    ],
    ids=["time", "memory"],
)
def test_a_re_render_past_a_render_bound_is_that_targets_stopped_verdict_and_the_others_still_match(
    fleet_env: FleetEnv,
    catalog: Catalog,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    bound: dict[str, str],
    code: str,
    message: str,
) -> None:
    monkeypatch.setitem(registry.COMPONENT_TYPES, hostile_plugin.TYPE, f"{hostile_plugin.__name__}:HANDLER")
    folder = catalog.root / "applications" / "hostile"
    folder.mkdir(parents=True)
    (folder / "app.yaml").write_text(HOSTILE_APP)
    run_id = _run(fleet_env, catalog)  # renders well: the handler turns hostile for the audit only
    monkeypatch.setattr(hostile_plugin, "MODE", mode)
    result = CliRunner().invoke(app, ["audit", "--all"], env={**fleet_env.environ(), **bound})
    assert result.exit_code == 1, result.stdout
    assert f"of run {run_id}: 8 match, 0 drift, 0 nondeterministic, 0 refused, 3 stopped" in result.stdout
    errors = result.stderr.splitlines()
    assert sorted(errors) == [
        f"Error: hostile@{cluster}: the re-render was stopped: {code}: {message} and was stopped"
        for cluster in ("cluster-a", "cluster-b", "cluster-c")
    ]
    with fleet_env.storage.sessions() as session:
        (record,) = all_audit_records(session)
    statement = parse_statement(parse_envelope(fleet_env.storage.objects.get(record.envelope_digest)).payload)
    verdicts = [(t["application"], t["verdict"]) for t in statement.predicate["targets"]]
    assert sorted(verdict for application, verdict in verdicts if application == "hostile") == [STOPPED] * 3
    assert {verdict for application, verdict in verdicts if application != "hostile"} == {MATCH}
