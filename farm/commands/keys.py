"""``farm keys``: ed25519 signing keys, the trusted-signers list and the record of its changes.

``generate`` writes a key pair; ``trust`` adds a public key; ``rotate`` makes a new signing key,
trusts it and keeps the old one trusted for verification; ``retire KEYID`` stops trusting a key;
``list`` shows the trusted keys and every recorded change of trust (who, when, which key, what).
"""

from __future__ import annotations

from pathlib import Path

import typer

from farm.commands._support import fail, reported_errors
from farm.evidence.keys import (
    generate_key_pair,
    load_configured_trust,
    load_public_key,
    load_signer,
    read_trust_record,
    retire_key,
    rotate_signing_key,
    trust_public_key,
    trust_record_path,
)
from farm.settings import file_in_the_way, load_settings

keys_app = typer.Typer(help="Signing keys and trusted signers.", no_args_is_help=True)


@keys_app.command("generate")
def generate_command(
    out: Path | None = typer.Option(
        None, "--out", help="folder for signing.key and signing.pub (default <FARM_HOME>/keys)"
    ),
) -> None:
    """Write a new ed25519 key pair; the private key file gets mode 0600 and is never overwritten."""
    if out is not None and (blocker := file_in_the_way(out)) is not None:
        raise fail(
            f"--out {out}: {blocker} is a file, not a folder (--out names the folder for the key pair)"
        )
    with reported_errors():
        folder = out if out is not None else load_settings().home / "keys"
        pair = generate_key_pair(folder)
    typer.echo(f"private key: {pair.private_key}")
    typer.echo(f"public key:  {pair.public_key}")
    typer.echo(f"keyid:       {pair.keyid}")


@keys_app.command("trust")
def trust_command(
    pubkey: Path = typer.Argument(..., help="a PEM public key file (signing.pub)"),
) -> None:
    """Add a public key to the trusted-signers list (FARM_TRUSTED_SIGNERS)."""
    with reported_errors():
        trusted_path = load_settings().trusted_signers_path
        keyid = trust_public_key(trusted_path, load_public_key(pubkey))
    typer.echo(f"trusted {keyid} in {trusted_path}")


@keys_app.command("rotate")
def rotate_command() -> None:
    """Make a new signing key and trust it; the old key stays trusted until farm keys retire KEYID."""
    with reported_errors():
        settings = load_settings()
        old, new = rotate_signing_key(settings)
    typer.echo(f"signing key: {new} (trusted in {settings.trusted_signers_path})")
    if old is not None:
        typer.echo(f"previous key {old} stays trusted for verification: farm keys retire {old} ends that")


@keys_app.command("retire")
def retire_command(keyid: str = typer.Argument(..., help="the key id to stop trusting")) -> None:
    """Stop trusting a key that is not the current signing key; recorded in the trust record."""
    with reported_errors():
        settings = load_settings()
        retire_key(settings, keyid)
    typer.echo(f"retired {keyid}: its signatures no longer verify")


@keys_app.command("list")
def list_command() -> None:
    """The trusted keys (the current signing key marked) and every recorded change of trust."""
    with reported_errors():
        settings = load_settings()
        trusted = load_configured_trust(settings)
        key_path = settings.signing_key_path
        current = load_signer(key_path).keyid if key_path.exists() else None
        changes = read_trust_record(settings.trusted_signers_path)
    typer.echo(f"trusted signers ({settings.trusted_signers_path}):")
    for keyid in sorted(trusted):
        typer.echo(f"  {keyid}{'  signing' if keyid == current else ''}")
    if current is not None and current not in trusted:
        typer.echo(f"  (the signing key {current} is NOT trusted: runs refuse to sign with it)")
    if current is None:
        typer.echo(f"  (no signing key at {key_path})")
    typer.echo(f"trust record ({trust_record_path(settings.trusted_signers_path)}):")
    for change in changes:
        note = f"  ({change.note})" if change.note else ""
        typer.echo(f"  {change.at}  {change.user}  {change.action:<9} {change.keyid}{note}")


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
