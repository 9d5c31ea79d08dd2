"""A fleet run with profiled targets on the local job path: the selection renders, the lock holds."""

from __future__ import annotations

import shutil
from pathlib import Path

from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.store.db import session_scope
from farm.store.runs import targets_of_run

from .conftest import FleetEnv

EXAMPLE = Path(__file__).parents[2] / "examples/fleet"


def _run(env: FleetEnv, root: Path) -> dict:
    _, planned = plan_catalog(env.storage, root)
    for job_id, key in planned.queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)
    with session_scope(env.storage.sessions) as session:
        targets = {(t.application, t.cluster_profile): t for t in targets_of_run(session, planned.run_id)}
        return {"summary": run_summary(env.storage, planned.run_id), "targets": targets}


def test_the_example_fleet_renders_its_profiled_targets_under_their_selection(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    result = _run(fleet_env, root)
    assert result["summary"].state == "completed"
    outputs = fleet_env.storage.objects
    internal = result["targets"][("catalog-api", "prod-nginx")]
    assert b"ingressClassName: nginx-internal" in outputs.get(internal.output_digest)


def test_an_application_overriding_an_owned_path_fails_its_target_with_a_lock_divergence(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    app = root / "applications" / "storefront" / "app.yaml"
    text = app.read_text()
    assert 'hostnames: ["shop.example.com"]' in text
    app.write_text(
        text.replace(
            'hostnames: ["shop.example.com"]',
            'hostnames: ["shop.example.com"]\n            ingressClassName: traefik',
        )
    )
    result = _run(fleet_env, root)
    failed = result["targets"][("storefront", "prod-nginx")]
    assert failed.state == "failed" and failed.error_code == "profile.lock_divergence"
    assert "expose" in failed.error_message and "ingressClassName" in failed.error_message
    assert failed.output_digest is None
    assert result["targets"][("storefront", "prod-gateway")].state == "succeeded"  # unprofiled: no lock
    assert result["targets"][("catalog-api", "prod-nginx")].state == "succeeded"


def test_a_write_equal_to_the_owned_value_passes_the_lock(fleet_env: FleetEnv, tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    app = root / "applications" / "storefront" / "app.yaml"
    app.write_text(
        app.read_text().replace(
            'hostnames: ["shop.example.com"]',
            'hostnames: ["shop.example.com"]\n            ingressClassName: nginx',
        )
    )
    result = _run(fleet_env, root)
    assert result["targets"][("storefront", "prod-nginx")].state == "succeeded"


def _plan_causes(env: FleetEnv, root: Path) -> dict[tuple[str, str], list[str]]:
    from farm.catalog import load_catalog
    from farm.fleet import preview as pv

    snapshot = load_catalog(root)
    run_id = pv.latest_run_of_fleet(env.storage, snapshot.name)
    baseline = pv.run_baseline(env.storage, run_id) if run_id else None
    plan = pv.preview(env.storage, snapshot, baseline, source="tests")
    return {(t.application, t.cluster): [str(c) for c in t.causes] for t in plan.render}


def test_plan_names_a_changed_selection_and_a_changed_declaration_apart(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    _run(fleet_env, root)
    fleet = root / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("profile: ingress-class=internal", "profile: ingress-class=public")
    )
    causes = _plan_causes(fleet_env, root)
    assert causes == {
        ("catalog-api", "prod-nginx"): ["profile selection changed"],
        ("orders-worker", "prod-nginx"): ["profile selection changed"],
    }
    fleet.write_text(
        fleet.read_text().replace("profile: ingress-class=public", "profile: ingress-class=internal")
    )
    declaration = root / "profiles" / "prod-nginx-ingress.yaml"
    declaration.write_text(
        declaration.read_text().replace("ingressClassName: nginx}", "ingressClassName: nginx-public}")
    )
    causes = _plan_causes(fleet_env, root)
    assert causes and all(cluster == "prod-nginx" for _, cluster in causes)
    assert all(
        c == ["profile declaration changed (profiles/prod-nginx-ingress.yaml)"] for c in causes.values()
    )


def test_plan_names_a_changed_profiled_cluster_profile_and_the_keys_that_changed(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    from farm.catalog import load_catalog
    from farm.fleet import preview as pv

    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    _run(fleet_env, root)
    cluster = root / "clusters" / "prod-nginx.yaml"
    cluster.write_text(cluster.read_text().replace("name: letsencrypt-prod", "name: letsencrypt-staging"))
    causes = _plan_causes(fleet_env, root)
    assert causes and all(cluster == "prod-nginx" for _, cluster in causes)
    assert all(c == ["ClusterProfile changed"] for c in causes.values())
    snapshot = load_catalog(root)
    baseline = pv.run_baseline(fleet_env.storage, pv.latest_run_of_fleet(fleet_env.storage, snapshot.name))
    plan = pv.preview(fleet_env.storage, snapshot, baseline, source="tests")
    documents = plan.as_json()["documents"]
    assert [d["path"] for d in documents] == ["clusters/prod-nginx.yaml"]
    assert documents[0]["keys"] == [
        {
            "path": "spec.capabilities.certificate.rendering.issuerRef.name",
            "kind": "changed",
            "old": "letsencrypt-prod",
            "new": "letsencrypt-staging",
        }
    ]


def test_a_stored_request_whose_envelope_strips_the_locks_is_refused_by_the_worker(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    """An attacker who can write storage and rows swaps a profiled target's request for one whose
    envelope owns nothing (so the lock check would let the application override the ingress
    class), with a matching action key: the worker recomputes the envelope from the snapshot."""
    import dataclasses
    import json

    from sqlalchemy import update

    from farm.catalog import TargetRequest
    from farm.identity.fingerprint import core_version
    from farm.identity.keys import request_action_key
    from farm.profiles.resolve import canonical
    from farm.store.models import RenderTarget
    from farm.store.snapshots import load_request, persist_requests

    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    app = root / "applications" / "storefront" / "app.yaml"
    app.write_text(
        app.read_text().replace(
            'hostnames: ["shop.example.com"]',
            'hostnames: ["shop.example.com"]\n            ingressClassName: traefik',
        )
    )
    snapshot, planned = plan_catalog(fleet_env.storage, root)
    with session_scope(fleet_env.storage.sessions) as session:
        row = next(
            t
            for t in targets_of_run(session, planned.run_id)
            if (t.application, t.cluster_profile) == ("storefront", "prod-nginx")
        )
        target_id, request_digest, pack = row.target_id, row.request_digest, row.request_pack
    honest = load_request(fleet_env.storage.objects, request_digest, pack)
    envelope = json.loads(honest.resolved_profile)
    envelope["selectedProfile"]["ownedPaths"] = {"expose": ["$present"]}
    forged = dataclasses.replace(honest, resolved_profile=canonical(envelope))
    target = next(t.target for t in snapshot.target_requests if t.request.digest == request_digest)
    forged_pack = persist_requests(fleet_env.storage.objects, [TargetRequest(target, forged)])
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            update(RenderTarget)
            .where(RenderTarget.id == target_id)
            .values(
                request_digest=forged.digest,
                request_pack=forged_pack,
                action_key=request_action_key(core_version(), forged.digest),
            )
        )
    for job_id, key in planned.queued:
        run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    with session_scope(fleet_env.storage.sessions) as session:
        refused = next(t for t in targets_of_run(session, planned.run_id) if t.target_id == target_id)
    assert (refused.state, refused.error_code) == ("failed", "profile.resolved_forged")
    assert "ownedPaths of capability 'expose'" in refused.error_message
    assert refused.output_digest is None
