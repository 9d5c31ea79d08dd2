"""``farm verify`` binds an output to the targets and cache entries that point at it.

Pointing a target or an action-cache entry at another target's valid signed output fails verify
with a named failure, and the planner's cache look-up refuses such an entry at use.
"""

from __future__ import annotations

import typer
from conftest_store import Fleet
from sqlalchemy import update
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
