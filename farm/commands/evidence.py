"""``farm export-evidence APP/CLUSTER``: a target's output, its DSSE envelope and the signers'
public keys as files, for an independent verifier (securesystemslib's DSSE, ``cosign
verify-blob-attestation --key``).

The envelope is the one its job signed for its whole batch: ``manifests.yaml.subject.json`` says
which subject of the statement is this output (its position, name and digest), and the statement's
``externalParameters.renders`` entry at that position is its provenance."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from farm.commands._support import fail, reported_errors, storage


def export_evidence_command(
    target: str = typer.Argument(..., help="APPLICATION/CLUSTER"),
    out: Path | None = typer.Option(None, "--out", help="folder to write (default: evidence-APP-CLUSTER)"),
) -> None:
    """Write a target's latest output, its signed envelope and the public key(s) that signed it."""
    from farm.fleet.queries import target_evidence

    application, sep, cluster = target.partition("/")
    if not sep or not application or not cluster:
        raise fail(f"target: expected APPLICATION/CLUSTER, got {target!r}")
    folder = out or Path(f"evidence-{application}-{cluster}")
    with reported_errors(), storage() as opened:
        try:
            evidence = target_evidence(opened, application, cluster)
        except LookupError as error:
            raise fail(str(error)) from None
    if folder.exists() and not folder.is_dir():
        raise fail(f"--out: {folder} exists and is not a folder; name another")
    folder.mkdir(parents=True, exist_ok=True)
    written = [_write(folder / "manifests.yaml", evidence.manifests)]
    written.append(_write(folder / "manifests.yaml.intoto.json", evidence.envelope))
    subject = {
        "subjectIndex": evidence.subject_index,
        "name": evidence.subject_name,
        "digest": {"sha256": evidence.output_digest},
    }
    written.append(
        _write(folder / "manifests.yaml.subject.json", json.dumps(subject, indent=2).encode() + b"\n")
    )
    for keyid, pem in sorted(evidence.public_keys.items()):
        written.append(_write(folder / f"signer-{keyid[:16]}.pub", pem.encode("ascii")))
    for path in written:
        typer.echo(str(path))
    typer.echo(
        f"this output is subject {evidence.subject_index} ({evidence.subject_name}) of the signed statement"
    )


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def register(app: typer.Typer) -> None:
    app.command("export-evidence")(export_evidence_command)
