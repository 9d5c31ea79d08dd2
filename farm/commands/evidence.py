"""``farm export-evidence APP/CLUSTER``: a target's output, its DSSE envelope and the signers'
public keys as files, for an independent verifier (securesystemslib's DSSE, ``cosign
verify-blob-attestation --key``)."""

from __future__ import annotations

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
    for keyid, pem in sorted(evidence.public_keys.items()):
        written.append(_write(folder / f"signer-{keyid[:16]}.pub", pem.encode("ascii")))
    for path in written:
        typer.echo(str(path))


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def register(app: typer.Typer) -> None:
    app.command("export-evidence")(export_evidence_command)
