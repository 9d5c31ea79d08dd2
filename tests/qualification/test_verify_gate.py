"""``farm verify --all`` puts the envelope a profiled qualification statement names through the
envelope gate: a statement signed by a trusted key over an envelope whose ownedPaths were forged
is refused, because the envelope is recomputed from the snapshot of the statement's fleet run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from farm.catalog import load_catalog
from farm.evidence.keys import load_configured_signer, load_configured_trust
from farm.evidence.qualification import Qualification, TargetOutput, sign_qualification
from farm.fleet.jobs import run_job
from farm.fleet.qualify import qualify_subject
from farm.fleet.service import Trigger
from farm.identity.canonical import sha256_hex
from farm.profiles import parse_selection
from farm.profiles.resolve import canonical
from farm.qualification import recorded, service
from farm.qualification.audit import verify_qualifications
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import open_storage
from farm.store.db import session_scope
from farm.store.models import utcnow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


def test_a_trusted_statement_over_an_envelope_with_forged_owned_paths_fails_verify(
    tmp_path: Path, database_url: str
) -> None:
    settings = load_settings(
        home=tmp_path / "farm", database_url=database_url, object_store=str(tmp_path / "objects")
    )
    storage = open_storage(settings)
    signer = load_configured_signer(settings)
    shutil.copytree(EXAMPLE, tmp_path / "fleet")
    snapshot = load_catalog(tmp_path / "fleet")

    def execute(queued) -> None:
        for job_id, key in queued:
            run_job(storage, signer, job_id, worker="test", expected_batch_key=key)

    result = qualify_subject(
        storage,
        snapshot,
        "prod-nginx",
        "ingress-class=internal",
        executor=execute,
        signer=signer,
        trusted_keyids=frozenset({signer.keyid}),
        trigger=Trigger.CLI,
        source="tests",
    )
    assert result.state == "qualified"
    trusted = load_configured_trust(settings)
    with session_scope(storage.sessions) as session:
        assert verify_qualifications(session, storage.objects, trusted) == (1, [])
        [(honest, subject)] = records.all_evidence(session)
        honest_digest, run_id = honest.subject_digest, honest.run_id

    envelope = json.loads(storage.objects.get(honest_digest))
    envelope["selectedProfile"]["ownedPaths"] = {"expose": ["$present"]}  # strip every lock
    forged = canonical(envelope)
    storage.objects.put(forged)
    assert (
        snapshot.resolved_for("prod-nginx", parse_selection("ingress-class=internal")).digest == honest_digest
    )
    qualification = Qualification(
        cluster="prod-nginx",
        selection="ingress-class=internal",
        subject_digest=sha256_hex(forged),
        descriptor_identity=service.today_for(snapshot, "prod-nginx").identity,
        run_id=run_id,
        outputs=(TargetOutput("storefront/prod-nginx", "0" * 64),),
    )
    statement = sign_qualification(signer, qualification)
    storage.objects.put(statement)
    with session_scope(storage.sessions) as session:
        subject = recorded.ensure_subject(session, "prod-nginx", "ingress-class=internal", utcnow())
        records.record_evidence(
            session,
            subject,
            qualification,
            envelope_digest=sha256_hex(statement),
            signer_keyid=signer.keyid,
            core_version="test",
            owned_paths_digest="",
            attested_at=utcnow(),
        )
    with session_scope(storage.sessions) as session:
        checked, failures = verify_qualifications(session, storage.objects, trusted)
    storage.close()
    assert checked == 2
    assert [failure.code for failure in failures] == ["profile.resolved_forged"]
    assert "ownedPaths of capability 'expose'" in failures[0].message
