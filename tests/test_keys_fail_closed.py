"""Keys fail closed, on the embedded default through the CLI (issue 27 item 5).

A key is generated only for a home that holds no evidence; a home with evidence and no key refuses
the run (one ``Error:`` line saying how to restore or rotate), and so does a signing key the trusted
signers do not hold: nothing is written, no key is generated, nothing new is trusted. ``farm keys
rotate`` makes and trusts a new key and keeps the old one trusted until ``farm keys retire``; each
change of trust is recorded and shown by ``farm keys list``.
"""

from __future__ import annotations

import getpass
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from fleet.conftest import Catalog, fresh_render_children, make_catalog  # noqa: F401 - the fixture
from sqlalchemy import func, select
from typer.testing import CliRunner, Result

from farm.cli import app as cli
from farm.evidence.keys import keyid_for, load_signer, load_trusted_signers
from farm.settings import load_settings
from farm.store.context import open_storage
from farm.store.db import read_scope
from farm.store.models import EvidenceRecord, FleetRun


def farm(*arguments: str) -> Result:
    return CliRunner().invoke(cli, [*arguments])


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The embedded default: nothing configured but FARM_HOME."""
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    yield tmp_path / "home"


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a", "cluster-b"))


def run(catalog: Catalog) -> Result:
    return farm("run", str(catalog.root), "--processes", "1")


def counts(home: Path) -> tuple[int, int]:
    """(fleet runs, evidence records) stored in the home."""
    storage = open_storage(load_settings(home=home))
    try:
        with read_scope(storage.sessions) as session:
            runs = session.scalar(select(func.count()).select_from(FleetRun))
            evidence = session.scalar(select(func.count()).select_from(EvidenceRecord))
    finally:
        storage.close()
    return runs, evidence


def key_path(home: Path) -> Path:
    return home / "keys" / "signing.key"


def trusted(home: Path) -> set[str]:
    return set(load_trusted_signers(home / "keys" / "trusted_signers"))


def after_a_good_run(home: Path, catalog: Catalog) -> str:
    result = run(catalog)
    assert result.exit_code == 0, result.output
    return load_signer(key_path(home)).keyid


def test_the_first_run_of_a_fresh_home_generates_trusts_and_records_its_key(
    home: Path, catalog: Catalog
) -> None:
    keyid = after_a_good_run(home, catalog)
    assert trusted(home) == {keyid}
    listed = farm("keys", "list")
    assert listed.exit_code == 0, listed.output
    assert f"  {keyid}  signing" in listed.output
    assert f"{getpass.getuser()}  generated {keyid}" in listed.output
    assert f"{getpass.getuser()}  trusted   {keyid}" in listed.output


def test_a_home_with_evidence_whose_signing_key_was_deleted_refuses_the_run_and_generates_no_key(
    home: Path, catalog: Catalog
) -> None:
    keyid = after_a_good_run(home, catalog)
    before = counts(home)
    key_path(home).unlink()
    (home / "keys" / "signing.pub").unlink()
    catalog.write_app("app-9")  # something to render
    result = run(catalog)
    assert result.exit_code == 1, result.output
    assert result.output.startswith(
        f"Error: {key_path(home)}: no signing key, and this home already holds evidence"
    )
    assert result.output.count("\n") == 1
    assert "restore the key file" in result.output and "farm keys rotate" in result.output
    assert keyid in result.output
    assert not key_path(home).exists()
    assert trusted(home) == {keyid}
    assert counts(home) == before


def test_a_home_whose_whole_keys_folder_was_deleted_refuses_the_run_from_the_evidence_it_holds(
    home: Path, catalog: Catalog
) -> None:
    after_a_good_run(home, catalog)
    before = counts(home)
    shutil.rmtree(home / "keys")
    catalog.write_app("app-9")
    result = run(catalog)
    assert result.exit_code == 1, result.output
    assert result.output.startswith(
        f"Error: {key_path(home)}: no signing key, and this home already holds evidence"
    )
    assert not key_path(home).exists() and trusted(home) == set()
    assert counts(home) == before


def test_a_replaced_signing_key_is_refused_naming_its_key_id_and_nothing_is_recorded(
    home: Path, catalog: Catalog
) -> None:
    keyid = after_a_good_run(home, catalog)
    before = counts(home)
    stranger = Ed25519PrivateKey.generate()
    os.chmod(key_path(home), 0o600)
    key_path(home).write_bytes(stranger.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    catalog.write_app("app-9")
    result = run(catalog)
    assert result.exit_code == 1, result.output
    assert result.output.startswith(f"Error: {key_path(home)}: the signing key ")
    assert result.output.count("\n") == 1
    assert (
        f"the signing key {keyid_for(stranger.public_key())} is not one the trusted signers" in result.output
    )
    assert trusted(home) == {keyid}
    assert counts(home) == before


def test_rotate_trusts_a_new_key_keeps_the_old_one_until_retired_and_records_each_change(
    home: Path, catalog: Catalog
) -> None:
    old = after_a_good_run(home, catalog)
    rotated = farm("keys", "rotate")
    assert rotated.exit_code == 0, rotated.output
    new = load_signer(key_path(home)).keyid
    assert new != old and trusted(home) == {old, new}
    assert (home / "keys" / "previous" / f"{old}.key").is_file()
    catalog.write_app("app-9")
    assert run(catalog).exit_code == 0
    verified = farm("verify", "--all")
    assert verified.exit_code == 0, verified.output  # the old key's evidence still verifies
    refused = farm("keys", "retire", new)
    assert refused.exit_code == 1 and "is the current signing key" in refused.output
    retired = farm("keys", "retire", old)
    assert retired.exit_code == 0, retired.output
    assert trusted(home) == {new}
    listed = farm("keys", "list").output
    user = getpass.getuser()
    actions = [line.split()[2:4] for line in listed.splitlines() if line.startswith("  20")]
    assert actions == [
        ["generated", old],
        ["trusted", old],
        ["generated", new],
        ["trusted", new],
        ["rotated", new],
        ["retired", old],
    ]
    assert f"{user}  rotated   {new}  (replaces {old})" in listed
    assert f"  {new}  signing" in listed and f"  {old}\n" not in listed.split("trust record")[0]
    after = farm("verify", "--all")
    assert after.exit_code == 1 and f"signed only by untrusted key(s) {old}" in after.output


def test_a_home_whose_key_was_lost_goes_on_after_farm_keys_rotate(home: Path, catalog: Catalog) -> None:
    old = after_a_good_run(home, catalog)
    key_path(home).unlink()
    catalog.write_app("app-9")
    assert run(catalog).exit_code == 1
    rotated = farm("keys", "rotate")
    assert rotated.exit_code == 0, rotated.output
    new = load_signer(key_path(home)).keyid
    assert trusted(home) == {old, new}
    result = run(catalog)
    assert result.exit_code == 0, result.output
    assert farm("verify", "--all").exit_code == 0
