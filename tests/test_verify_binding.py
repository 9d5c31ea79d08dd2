"""``farm verify`` binds an output to the targets and cache entries that point at it.

Pointing a target or an action-cache entry at another target's valid signed output fails verify
with a named failure, and the planner's cache look-up refuses such an entry at use.
"""

from __future__ import annotations

import typer
from conftest_store import Fleet
from sqlalchemy import select, update
from typer.testing import CliRunner

from farm.store.models import ActionCacheEntry, RenderTarget
from farm.store.runs import cached_outputs

WEB = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
API = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n"


def _verify_all(app: typer.Typer, env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", "--all"], env=env)
    return result.exit_code, result.output


def test_a_target_pointed_at_another_targets_signed_output_fails_verify(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, web_target, _ = cli_fleet.render(WEB, application="web")
    _, _, api = cli_fleet.render(API, application="api")
    with cli_fleet.sessions.begin() as session:
        session.execute(
            update(RenderTarget).where(RenderTarget.id == web_target).values(output_digest=api.output_digest)
        )
    code, output = _verify_all(storage_cli, farm_env)
    assert code == 1, output
    assert (
        f"FAIL binding.target_mismatch: output {api.output_digest}: target web/prod ({web_target})" in output
    )


def test_a_cache_entry_pointed_at_another_targets_signed_output_fails_verify(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, _, web = cli_fleet.render(WEB, application="web")
    _, _, api = cli_fleet.render(API, application="api")
    with cli_fleet.sessions.begin() as session:
        session.execute(
            update(ActionCacheEntry)
            .where(ActionCacheEntry.action_key == web.action_key)
            .values(output_digest=api.output_digest, evidence_id=api.evidence_id)
        )
    code, output = _verify_all(storage_cli, farm_env)
    assert code == 1, output
    assert (
        f"FAIL binding.cache_mismatch: output {api.output_digest}: action cache entry {web.action_key}"
        in output
    )


def test_a_poisoned_cache_entry_is_refused_at_use(cli_fleet: Fleet) -> None:
    _, _, web = cli_fleet.render(WEB, application="web")
    _, _, api = cli_fleet.render(API, application="api")
    with cli_fleet.sessions.begin() as session:
        assert cached_outputs(session, [web.action_key, api.action_key]) == {
            web.action_key: web.output_digest,
            api.action_key: api.output_digest,
        }
        session.execute(
            update(ActionCacheEntry)
            .where(ActionCacheEntry.action_key == web.action_key)
            .values(output_digest=api.output_digest, evidence_id=api.evidence_id)
        )
    with cli_fleet.sessions() as session:
        assert cached_outputs(session, [web.action_key, api.action_key]) == {
            api.action_key: api.output_digest
        }


def test_a_cache_entry_re_pointed_at_another_output_keeping_its_evidence_is_refused_at_use(
    cli_fleet: Fleet,
) -> None:
    _, _, web = cli_fleet.render(WEB, application="web")
    _, _, api = cli_fleet.render(API, application="api")
    with cli_fleet.sessions.begin() as session:
        session.execute(
            update(ActionCacheEntry)
            .where(ActionCacheEntry.action_key == web.action_key)
            .values(output_digest=api.output_digest)
        )
    with cli_fleet.sessions() as session:
        assert web.action_key not in cached_outputs(session, [web.action_key])


def _swap_bindings(fleet: Fleet, first: str, second: str) -> None:
    """What an attacker with write access to the database does: swap everything that binds two
    targets to their renders (output, action key, request digest and request pack) at once."""
    columns = ("output_digest", "action_key", "request_digest", "request_pack")
    with fleet.sessions.begin() as session:
        rows = {
            target_id: session.execute(
                select(*(getattr(RenderTarget, column) for column in columns)).where(
                    RenderTarget.id == target_id
                )
            ).one()
            for target_id in (first, second)
        }
        for target_id, other in ((first, second), (second, first)):
            session.execute(
                update(RenderTarget)
                .where(RenderTarget.id == target_id)
                .values(dict(zip(columns, rows[other], strict=True)))
            )


def test_swapping_the_whole_binding_of_two_targets_of_different_applications_fails_verify_naming_both_rows(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    run_id = cli_fleet.new_run()
    _, web_target, web = cli_fleet.render(WEB, application="web", run_id=run_id)
    _, api_target, api = cli_fleet.render(API, application="api", run_id=run_id)
    _swap_bindings(cli_fleet, web_target, api_target)
    code, output = _verify_all(storage_cli, farm_env)
    assert code == 1, output
    assert (
        f"FAIL binding.target_mismatch: output {api.output_digest}: target web/prod ({web_target}) of run"
        f" {run_id}: no statement about this output names its target" in output
    )
    assert "differs in application (row 'web', signed 'api')" in output
    assert (
        f"FAIL binding.target_mismatch: output {web.output_digest}: target api/prod ({api_target})" in output
    )
    assert "2 output(s) checked, 2 failure(s)" in output


def test_a_target_whose_request_digest_alone_was_changed_fails_verify_naming_the_request(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, web_target, web = cli_fleet.render(WEB, application="web")
    _, _, api = cli_fleet.render(API, application="api")
    with cli_fleet.sessions.begin() as session:
        other_request = session.scalar(
            select(RenderTarget.request_digest).where(RenderTarget.output_digest == api.output_digest)
        )
        session.execute(
            update(RenderTarget).where(RenderTarget.id == web_target).values(request_digest=other_request)
        )
    code, output = _verify_all(storage_cli, farm_env)
    assert code == 1, output
    assert (
        f"FAIL binding.target_mismatch: output {web.output_digest}: target web/prod ({web_target})" in output
    )
    assert "differs in request digest" in output and "application" not in output.split("differs in")[1]


def test_one_output_signed_for_two_targets_binds_each_of_them(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    run_id = cli_fleet.new_run()
    _, _, web = cli_fleet.render(WEB, application="web", run_id=run_id)
    _, _, same = cli_fleet.render(WEB, application="api", run_id=run_id)  # the same bytes, another target
    assert same.output_digest == web.output_digest and same.evidence_id != web.evidence_id
    code, output = _verify_all(storage_cli, farm_env)
    assert code == 0, output
    assert "1 output(s) checked, 0 failure(s)" in output
