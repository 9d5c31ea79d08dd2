"""``farm diff``: failures are their own category, fixed targets are named, ``--exit-code`` for CI,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from farm.cli import app as cli
from farm.core.errors import MAX_MESSAGE
from farm.execution.local import run_local
from farm.fleet.diff import diff_runs
from farm.fleet.service import plan_catalog

from .conftest import Catalog, FleetEnv

APP_3 = [("app-3", c) for c in ("cluster-a", "cluster-b", "cluster-c")]


def _run(env: FleetEnv, catalog: Catalog) -> str:
    _, planned = plan_catalog(env.storage, catalog.root)
    run_local(env.settings, planned.queued, processes=2)
    return planned.run_id


def _diff(env: FleetEnv, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["diff", *args], env=env.environ())
    return result.exit_code, result.stdout, result.stderr


def test_a_target_that_fails_in_the_second_run_is_failed_not_changed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    first = _run(fleet_env, catalog)
    catalog.break_app("app-3")
    second = _run(fleet_env, catalog)
    diff = diff_runs(fleet_env.storage, first, second)
    assert diff.changed == [] and diff.added == [] and diff.removed == [] and diff.fixed == []
    assert [f.target for f in diff.failed] == APP_3
    assert {f.before for f in diff.failed} == {"rendered"}
    assert len({f.error_code for f in diff.failed}) == 1 and diff.failed[0].error_code != "unknown"
    assert all('component "app-3"' in f.message for f in diff.failed)
    assert diff.unchanged == 8
    code, stdout, _ = _diff(fleet_env, first, second, "--unified")
    assert code == 0  # without --exit-code a diff is a report
    assert not any(line.startswith("changed") for line in stdout.splitlines())
    assert "---" not in stdout  # no unified diff of a manifest deleted
    lines = [line for line in stdout.splitlines() if line.startswith("failed")]
    assert len(lines) == 3
    assert lines[0].startswith(f"failed   app-3/cluster-a (rendered before): {diff.failed[0].error_code}: ")


def test_a_target_that_failed_in_the_first_run_and_renders_in_the_second_is_fixed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    catalog.break_app("app-3")
    first = _run(fleet_env, catalog)
    catalog.write_app("app-3")
    second = _run(fleet_env, catalog)
    diff = diff_runs(fleet_env.storage, first, second)
    assert diff.fixed == APP_3
    assert diff.failed == [] and diff.changed == [] and diff.unchanged == 8
    _, stdout, _ = _diff(fleet_env, first, second)
    assert [line for line in stdout.splitlines() if line.startswith("fixed")] == [
        f"fixed    {a}/{c}" for a, c in APP_3
    ]


def test_a_target_failing_in_both_runs_is_failed_with_its_earlier_error_code(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    catalog.break_app("app-3")
    first = _run(fleet_env, catalog)
    second = _run(fleet_env, catalog)  # the failure is served from the cache
    diff = diff_runs(fleet_env.storage, first, second)
    assert [f.target for f in diff.failed] == APP_3
    assert all(f.before == "failed" and f.before_code == f.error_code for f in diff.failed)
    code, stdout, _ = _diff(fleet_env, first, second, "--exit-code")
    assert code == 1
    assert f"app-3/cluster-b (failed with {diff.failed[0].error_code} before)" in stdout


def test_diff_exit_code_is_0_without_a_difference_and_1_with_a_change_or_a_failure(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    first = _run(fleet_env, catalog)
    same = _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v1.1.0")
    changed = _run(fleet_env, catalog)
    catalog.break_app("app-3")
    failed = _run(fleet_env, catalog)
    assert _diff(fleet_env, first, same, "--exit-code")[0] == 0
    assert _diff(fleet_env, first, same, "--exit-code", "--json")[0] == 0
    code, stdout, _ = _diff(fleet_env, same, changed, "--exit-code")
    assert code == 1 and "changed  app-1/cluster-a" in stdout
    code, stdout, _ = _diff(fleet_env, changed, failed, "--exit-code", "--json")
    assert code == 1 and json.loads(stdout)["changed"] == []
    assert _diff(fleet_env, same, changed)[0] == 0  # without the flag a difference exits 0


def test_diff_of_an_unknown_run_is_one_error_line_and_exit_1_with_nothing_on_stdout(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    first = _run(fleet_env, catalog)
    code, stdout, stderr = _diff(fleet_env, first, "no-such-run", "--exit-code")
    assert code == 1 and stdout == ""
    assert stderr.splitlines() == [
        "Error: run no-such-run does not exist (give a run id, a unique prefix of one, or latest; farm runs lists them)"
    ]


def test_diff_json_lists_each_failure_with_its_code_bounded_message_and_earlier_state(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    first = _run(fleet_env, catalog)
    catalog.write_app("app-3", image="ghcr.io/example/" + "x" * 50_000)  # no tag, quoted whole
    catalog.write_app("app-4")  # a new target, rendered
    catalog.write_app("app-1", image="ghcr.io/example/app:v1.1.0")
    second = _run(fleet_env, catalog)
    code, stdout, _ = _diff(fleet_env, first, second, "--json")
    assert code == 0
    payload = json.loads(stdout)
    assert sorted(payload) == ["added", "changed", "failed", "fixed", "removed", "unchanged"]
    assert payload["added"] == ["app-4/cluster-a", "app-4/cluster-b", "app-4/cluster-c"]
    assert payload["changed"] == ["app-1/cluster-a", "app-1/cluster-b", "app-1/cluster-c"]
    assert payload["removed"] == [] and payload["fixed"] == [] and payload["unchanged"] == 5
    failed = payload["failed"]
    assert [f["target"] for f in failed] == ["app-3/cluster-a", "app-3/cluster-b", "app-3/cluster-c"]
    for failure in failed:
        assert sorted(failure) == ["before", "before_error_code", "error_code", "message", "target"]
        assert failure["before"] == "rendered" and failure["before_error_code"] is None
        assert failure["error_code"] and 'component "app-3"' in failure["message"]
        assert len(failure["message"]) < MAX_MESSAGE + 100 and "characters)" in failure["message"]
    assert len(stdout) < 4 * (MAX_MESSAGE + 1000)


def test_a_new_target_that_fails_is_failed_not_added(fleet_env: FleetEnv, catalog: Catalog) -> None:
    first = _run(fleet_env, catalog)
    catalog.break_app("app-4")
    second = _run(fleet_env, catalog)
    diff = diff_runs(fleet_env.storage, first, second)
    assert diff.added == []
    assert [(f.target, f.before) for f in diff.failed] == [
        (("app-4", c), "absent") for c in ("cluster-a", "cluster-b", "cluster-c")
    ]
