"""Signing keys, key ids, the trusted-signers list and the keys commands."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
import typer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from typer.testing import CliRunner

from farm.evidence.keys import (
    KeyFileError,
    generate_key_pair,
    keyid_for,
    load_configured_signer,
    load_public_key,
    load_signer,
    load_trusted_signers,
    public_key_raw,
    trust_public_key,
)
from farm.settings import load_settings


def test_generate_writes_a_private_key_with_mode_0600(tmp_path: Path) -> None:
    pair = generate_key_pair(tmp_path / "keys")
    assert stat.S_IMODE(pair.private_key.stat().st_mode) == 0o600
    signer = load_signer(pair.private_key)
    assert signer.keyid == pair.keyid == keyid_for(load_public_key(pair.public_key))
    assert signer.keyid == hashlib.sha256(public_key_raw(signer.public_key)).hexdigest()
    names = sorted(path.name for path in (tmp_path / "keys").iterdir())
    assert names == ["signing.key", "signing.pub"]  # no temporary file is left behind


def test_generate_refuses_to_overwrite_a_key(tmp_path: Path) -> None:
    pair = generate_key_pair(tmp_path)
    before = pair.private_key.read_bytes()
    with pytest.raises(KeyFileError, match=str(pair.private_key)):
        generate_key_pair(tmp_path)
    assert pair.private_key.read_bytes() == before


def test_signer_repr_never_shows_the_private_key(tmp_path: Path) -> None:
    pair = generate_key_pair(tmp_path)
    signer = load_signer(pair.private_key)
    assert repr(signer) == f"Signer(keyid={signer.keyid!r})"


def test_missing_or_bad_key_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=f"{tmp_path / 'absent.key'}: signing key file not found"):
        load_signer(tmp_path / "absent.key")
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key")
    with pytest.raises(KeyFileError, match=str(garbage)):
        load_signer(garbage)
    ec_key = tmp_path / "ec.key"
    ec_key.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    with pytest.raises(KeyFileError, match="not ed25519"):
        load_signer(ec_key)


def test_trusted_signers_file_and_folder(tmp_path: Path) -> None:
    first = generate_key_pair(tmp_path / "a")
    second = generate_key_pair(tmp_path / "b")
    trusted_file = tmp_path / "trusted"
    assert len(load_trusted_signers(trusted_file)) == 0  # absent: nobody is trusted
    trust_public_key(trusted_file, load_public_key(first.public_key))
    trust_public_key(trusted_file, load_public_key(second.public_key))
    trust_public_key(trusted_file, load_public_key(first.public_key))  # idempotent
    assert set(load_trusted_signers(trusted_file)) == {first.keyid, second.keyid}
    folder = tmp_path / "trusted.d"
    folder.mkdir()
    trust_public_key(folder, load_public_key(second.public_key))
    assert set(load_trusted_signers(folder)) == {second.keyid}


def test_garbage_in_the_trusted_signers_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    pair = generate_key_pair(tmp_path)
    trusted_file = tmp_path / "trusted"
    trusted_file.write_text("# comment\n" + pair.public_key.read_text() + "ssh-ed25519 AAAA\n")
    with pytest.raises(KeyFileError, match=f"{trusted_file}: unexpected text"):
        load_trusted_signers(trusted_file)


def test_embedded_default_generates_and_trusts_a_key_on_first_use(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path / ".farm")
    signer = load_configured_signer(settings)
    assert settings.signing_key_path == tmp_path / ".farm" / "keys" / "signing.key"
    assert stat.S_IMODE(settings.signing_key_path.stat().st_mode) == 0o600
    assert set(load_trusted_signers(settings.trusted_signers_path)) == {signer.keyid}
    assert load_configured_signer(settings).keyid == signer.keyid  # second use loads, does not regenerate


def test_a_configured_key_that_does_not_exist_is_an_error_not_a_new_key(tmp_path: Path) -> None:
    settings = load_settings(home=tmp_path, signing_key=tmp_path / "missing.key")
    with pytest.raises(KeyFileError, match="missing.key"):
        load_configured_signer(settings)
    assert not (tmp_path / "missing.key").exists()


def test_keys_commands(storage_cli: typer.Typer, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"FARM_HOME": str(tmp_path / ".farm"), "FARM_TRUSTED_SIGNERS": str(tmp_path / "trusted")}
    result = runner.invoke(storage_cli, ["keys", "generate", "--out", str(tmp_path / "k")], env=env)
    assert result.exit_code == 0, result.output
    private_key = tmp_path / "k" / "signing.key"
    assert stat.S_IMODE(private_key.stat().st_mode) == 0o600
    assert "PRIVATE" not in result.output
    keyid = load_signer(private_key).keyid
    result = runner.invoke(storage_cli, ["keys", "trust", str(tmp_path / "k" / "signing.pub")], env=env)
    assert result.exit_code == 0 and keyid in result.output
    assert set(load_trusted_signers(tmp_path / "trusted")) == {keyid}
    again = runner.invoke(storage_cli, ["keys", "generate", "--out", str(tmp_path / "k")], env=env)
    assert again.exit_code == 1 and "refusing to overwrite" in again.output
    bad = runner.invoke(storage_cli, ["keys", "trust", str(tmp_path / "nope.pub")], env=env)
    assert bad.exit_code == 1 and "nope.pub" in bad.output


def test_keys_generate_defaults_to_the_farm_home(storage_cli: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(storage_cli, ["keys", "generate"], env={"FARM_HOME": str(tmp_path / "h")})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "h" / "keys" / "signing.key").is_file()
