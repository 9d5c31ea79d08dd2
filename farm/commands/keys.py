"""``farm keys generate`` and ``farm keys trust``: ed25519 signing keys and the trusted-signers list."""

from __future__ import annotations

from pathlib import Path

import typer

from farm.commands._support import reported_errors
from farm.evidence.keys import generate_key_pair, load_public_key, trust_public_key
from farm.settings import load_settings

keys_app = typer.Typer(help="Signing keys and trusted signers.", no_args_is_help=True)


@keys_app.command("generate")
def generate_command(
    out: Path | None = typer.Option(
        None, "--out", help="folder for signing.key and signing.pub (default <FARM_HOME>/keys)"
    ),
) -> None:
    """Write a new ed25519 key pair; the private key file gets mode 0600 and is never overwritten."""
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


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
