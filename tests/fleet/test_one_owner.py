"""One owner per flow: every run starts in ``farm.fleet.service``, whoever starts it, so the
behaviours of the CLI, the API, qualification and the Celery task cannot drift apart again.
Each test here is one drift that was found before the owner existed."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from farm.catalog import CatalogSnapshot, load_catalog
from farm.cli import app as cli
from farm.execution.executors import Executor, executor_for
from farm.execution.inline import InlineExecutor
from farm.fleet import preview as pv
from farm.fleet.service import (
    RunKind,
    Trigger,
    qualify,
    qualify_stored_subject,
    start_fleet_run,
)
from farm.store.db import read_scope
from farm.store.runs import run_by_id

from .conftest import FleetEnv

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fleet"
SUBJECT = ("prod-nginx", "ingress-class=internal")


def _example(tmp_path: Path) -> Path:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    return root


def _local(env: FleetEnv) -> Executor:
    return executor_for(env.settings, "local", processes=1)


def _fleet_run(env: FleetEnv, tmp_path: Path, trigger: Trigger = Trigger.CLI) -> tuple[Path, CatalogSnapshot]:
    """A copy of the example fleet, run once on the local pool."""
    root = _example(tmp_path)
    snapshot = load_catalog(root)
    start_fleet_run(env.storage, snapshot, trigger=trigger, source=str(root), executor=_local(env))
    return root, snapshot


def test_after_qualifying_one_subject_a_plan_of_an_image_change_names_only_application_changed(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root, snapshot = _fleet_run(fleet_env, tmp_path, Trigger.CLI)
    [result] = qualify(
        fleet_env.storage,
        snapshot,
        [SUBJECT],
        executor=_local(fleet_env),
        trigger=Trigger.CLI,
        source=str(root),
    )
    assert result.state == "qualified"
    app = root / "applications" / "storefront" / "app.yaml"
    app.write_text(app.read_text().replace("storefront:v2.4.1", "storefront:v2.4.2"))

    changed = load_catalog(root)
    baseline_run = pv.latest_run_of_fleet(fleet_env.storage, changed.name)
    with read_scope(fleet_env.storage.sessions) as session:
        assert run_by_id(session, baseline_run).kind == RunKind.FLEET  # never the qualification's run
    plan = pv.preview(
        fleet_env.storage, changed, pv.run_baseline(fleet_env.storage, baseline_run), source=str(root)
    )
    storefront = {t for t in snapshot.targets if t.application == "storefront"}
    assert set(plan.by_cause()) == {pv.APPLICATION}
    assert {(t.application, t.cluster) for t in plan.render} == {
        (t.application, t.cluster) for t in storefront
    }


def test_runs_record_their_kind_trigger_and_fleet_and_farm_runs_json_shows_them(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root, snapshot = _fleet_run(fleet_env, tmp_path, Trigger.API)
    qualify(
        fleet_env.storage,
        snapshot,
        [SUBJECT],
        executor=_local(fleet_env),
        trigger=Trigger.CLI,
        source=str(root),
    )

    result = CliRunner().invoke(cli, ["runs", "--json"], env=fleet_env.environ())
    assert result.exit_code == 0, result.output
    runs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["kind"], r["trigger"], r["fleet"]) for r in runs] == [
        ("qualification", "cli", "example"),
        ("fleet", "api", "example"),
    ]
    assert all(r["state"] == "completed" and r["duration_seconds"] >= 0 for r in runs)


def test_the_qualify_task_renders_from_the_stored_snapshot_even_when_the_folder_is_gone(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root, snapshot = _fleet_run(fleet_env, tmp_path, Trigger.CLI)
    shutil.rmtree(root)  # what the worker qualifies can only come from storage now

    result = qualify_stored_subject(
        fleet_env.storage,
        snapshot.digest,
        *SUBJECT,
        executor=InlineExecutor(fleet_env.storage, fleet_env.signer, "test"),
        signer=fleet_env.signer,
        trusted_keyids=frozenset({fleet_env.signer.keyid}),
    )
    assert result.state == "qualified"
    with read_scope(fleet_env.storage.sessions) as session:
        run = run_by_id(session, result.run_id)
        assert (run.kind, run.trigger, run.snapshot_digest) == ("qualification", "schedule", snapshot.digest)


def test_the_boards_subject_form_is_what_farm_qualify_takes(fleet_env: FleetEnv, tmp_path: Path) -> None:
    root = _example(tmp_path)
    env = fleet_env.environ()
    subject = f"{SUBJECT[0]}:{SUBJECT[1]}"
    qualified = CliRunner().invoke(cli, ["qualify", str(root), subject, "--executor", "local"], env=env)
    assert qualified.exit_code == 0, qualified.output
    assert qualified.stdout.startswith(f"{subject}: qualified")
    board = CliRunner().invoke(cli, ["qualification"], env=env)
    assert any(line.startswith(f"{subject}  qualified") for line in board.stdout.splitlines()), board.stdout
    board_json = json.loads(CliRunner().invoke(cli, ["qualification", "--json"], env=env).stdout)
    assert subject in {row["subject"] for row in board_json}

    old_form = CliRunner().invoke(
        cli, ["qualify", str(root), "prod-nginx:profile=ingress-class=internal"], env=env
    )
    assert old_form.exit_code == 2 and "CLUSTER:PROFILE=VALUE" in old_form.output


def _modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "farm").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names + ["workers.tasks", "workers.celery_app", "workers.schedule"]


def test_every_module_imports_on_its_own_in_a_fresh_process() -> None:
    """One interpreter per module would take minutes; one interpreter that forgets every farm
    module (and the metrics they registered) before each import tells the same: a module that
    only imports after another (a cycle) fails here."""
    probe = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m.split('.')[0] in ('farm', 'workers')]:\n"
        "        del sys.modules[loaded]\n"
        "    if 'prometheus_client' in sys.modules:  # farm.metrics registers its metrics again\n"
        "        registry = sys.modules['prometheus_client'].REGISTRY\n"
        "        for collector in list(registry._collector_to_names):\n"
        "            registry.unregister(collector)\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as error:\n"
        "        failed.append(f'{name}: {type(error).__name__}: {error}')\n"
        "print('\\n'.join(failed))\n"
    )
    env = {"FARM_BROKER_URL": "redis://127.0.0.1:6379/15", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", probe, *_modules()],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == ""


def _imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _session_queries(path: Path) -> list[int]:
    """Lines that query a database session directly (``session.get/execute/scalar/…``)."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"get", "execute", "scalar", "scalars", "query", "add", "delete", "merge"}
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "session"
    ]


def _outside_the_store() -> list[Path]:
    return [
        path
        for folder in ("farm", "workers")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith("farm/store/")
    ]


def test_nothing_outside_the_store_and_the_migrations_imports_sqlalchemy_or_queries_a_session() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in _outside_the_store()
        for line, module in _imports_of(path)
        if module.split(".")[0] in ("sqlalchemy", "alembic")
    ]
    offenders += [
        f"{path.relative_to(ROOT)}:{line}: queries a session"
        for path in _outside_the_store()
        for line in _session_queries(path)
    ]
    assert offenders == []


# What the store persists (catalog snapshots, signed evidence, identities) and its settings: it
# never imports a flow or a rule that works on its records (qualification states are derived in
# farm/qualification/recorded.py from what the store reads).
STORE_MAY_IMPORT = (
    "farm.store",
    "farm.catalog",
    "farm.core",
    "farm.evidence",
    "farm.identity",
    "farm.settings",
)


def test_the_store_imports_no_flow_and_no_rule_that_derives_from_its_records() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in sorted((ROOT / "farm" / "store").rglob("*.py"))
        for line, module in _imports_of(path)
        if module.startswith("farm.") and not module.startswith(STORE_MAY_IMPORT)
    ]
    assert offenders == []


def test_the_store_check_sees_an_import_and_a_session_query(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from sqlalchemy import select\n\ndef f(session):\n    return session.scalar(select(1))\n")
    assert _imports_of(bad) == [(1, "sqlalchemy")]
    assert _session_queries(bad) == [4]
