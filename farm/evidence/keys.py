"""ed25519 signing keys, key ids and the trusted-signers list.

- A key pair is two PEM files: ``signing.key`` (PKCS#8, unencrypted, created with mode 0600 and
  never overwritten) and ``signing.pub`` (SubjectPublicKeyInfo). The private key is never written
  to the database and never logged; only its key id and public key leave this module.
- **keyid** = sha256 of the 32 raw public-key bytes, as 64 lowercase hex characters. It is stable
  across PEM re-encodings and is what DSSE signatures carry.
- The **trusted-signers list** decides which signatures count. It is a file holding any number of
  PEM public keys (blank lines and ``#`` comments allowed between them), or a folder whose
  ``*.pub``/``*.pem`` files are read the same way. The file is the source of truth; the
  ``signers`` table only mirrors it for queries.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from farm.identity.canonical import sha256_hex

if TYPE_CHECKING:
    from farm.settings import FarmSettings

PRIVATE_KEY_NAME = "signing.key"
PUBLIC_KEY_NAME = "signing.pub"
_PEM_BLOCK = re.compile(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", re.DOTALL)


class KeyFileError(ValueError):
    """A key file that is missing, unreadable or not an ed25519 key; the message names the file."""


def keyid_for(public_key: Ed25519PublicKey) -> str:
    """sha256 hex of the raw 32-byte public key."""
    return sha256_hex(public_key_raw(public_key))


def public_key_raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key_pem(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


@dataclass(frozen=True)
class Signer:
    """A loaded private key. ``repr`` shows only the key id."""

    keyid: str
    public_key: Ed25519PublicKey
    _private_key: Ed25519PrivateKey

    def sign(self, message: bytes) -> bytes:
        return self._private_key.sign(message)

    def __repr__(self) -> str:
        return f"Signer(keyid={self.keyid!r})"

    @property
    def public_key_pem(self) -> str:
        return public_key_pem(self.public_key)


def signer_from_private_key(private_key: Ed25519PrivateKey) -> Signer:
    public_key = private_key.public_key()
    return Signer(keyid=keyid_for(public_key), public_key=public_key, _private_key=private_key)


@dataclass(frozen=True)
class KeyPairPaths:
    private_key: Path
    public_key: Path
    keyid: str


def generate_key_pair(directory: Path) -> KeyPairPaths:
    """Write a new ed25519 key pair into ``directory``; refuse to overwrite an existing key."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    private_path = directory / PRIVATE_KEY_NAME
    public_path = directory / PUBLIC_KEY_NAME
    private_key = Ed25519PrivateKey.generate()
    private_pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write_new_private_file(private_path, private_pem)
    public_path.write_text(public_key_pem(private_key.public_key()), encoding="ascii")
    return KeyPairPaths(private_path, public_path, keyid_for(private_key.public_key()))


def _write_new_private_file(path: Path, data: bytes) -> None:
    # Written to a private temporary file, then hard-linked into place: the link fails if a key
    # already exists, and nobody can ever read a half-written key.
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".key")
    try:
        os.fchmod(descriptor, 0o600)
        os.write(descriptor, data)
        os.fsync(descriptor)
        os.close(descriptor)
        try:
            os.link(temp_name, path)
        except FileExistsError:
            raise KeyFileError(f"{path}: a key already exists there; refusing to overwrite it") from None
    finally:
        os.unlink(temp_name)


def load_signer(path: Path) -> Signer:
    """Load an ed25519 private key (PKCS#8 PEM) from ``path``."""
    data = _read_key_file(path, "signing key")
    try:
        private_key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"{path}: not a readable unencrypted PEM private key ({error})") from None
    if not isinstance(private_key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: the private key is not ed25519")
    return signer_from_private_key(private_key)


def parse_public_key_pem(data: bytes, source: str) -> Ed25519PublicKey:
    """Decode one PEM public key; ``source`` names where it came from in error messages."""
    try:
        public_key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"{source}: not a PEM public key ({error})") from None
    if not isinstance(public_key, Ed25519PublicKey):
        raise KeyFileError(f"{source}: the public key is not ed25519")
    return public_key


def load_public_key(path: Path) -> Ed25519PublicKey:
    return parse_public_key_pem(_read_key_file(path, "public key"), str(path))


def _read_key_file(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(f"{path}: {what} file not found") from None
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read {what} file ({error.strerror})") from None


class TrustedSigners(Mapping[str, Ed25519PublicKey]):
    """Key id → public key of every signer whose signatures count."""

    def __init__(self, keys: Mapping[str, Ed25519PublicKey] | None = None) -> None:
        self._keys = dict(keys or {})

    def __getitem__(self, keyid: str) -> Ed25519PublicKey:
        return self._keys[keyid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def verifies(self, keyid: str, message: bytes, signature: bytes) -> bool:
        """True if ``keyid`` is trusted and ``signature`` is its valid signature of ``message``."""
        public_key = self._keys.get(keyid)
        if public_key is None:
            return False
        try:
            public_key.verify(signature, message)
        except InvalidSignature:
            return False
        return True


def load_trusted_signers(path: Path) -> TrustedSigners:
    """Read a trusted-signers file or folder. A missing path means no signer is trusted."""
    if not path.exists():
        return TrustedSigners()
    files = sorted([*path.glob("*.pub"), *path.glob("*.pem")]) if path.is_dir() else [path]
    keys: dict[str, Ed25519PublicKey] = {}
    for file in files:
        for public_key in _parse_trusted_file(file):
            keys[keyid_for(public_key)] = public_key
    return TrustedSigners(keys)


def _parse_trusted_file(path: Path) -> list[Ed25519PublicKey]:
    text = _read_key_file(path, "trusted signers").decode("utf-8", errors="replace")
    outside = _PEM_BLOCK.sub("", text)
    for line in outside.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            raise KeyFileError(f"{path}: unexpected text outside a PEM public key: {stripped[:40]!r}")
    blocks = _PEM_BLOCK.findall(text)
    return [
        parse_public_key_pem(block.encode("ascii"), f"{path} (key {i + 1})") for i, block in enumerate(blocks)
    ]


def trust_public_key(trusted_path: Path, public_key: Ed25519PublicKey) -> str:
    """Add ``public_key`` to the trusted-signers file or folder; return its key id."""
    keyid = keyid_for(public_key)
    if keyid in load_trusted_signers(trusted_path):
        return keyid
    pem = public_key_pem(public_key)
    if trusted_path.is_dir():
        (trusted_path / f"{keyid}.pub").write_text(pem, encoding="ascii")
        return keyid
    trusted_path.parent.mkdir(parents=True, exist_ok=True)
    with trusted_path.open("a", encoding="ascii") as handle:
        handle.write(f"# keyid {keyid}\n{pem}")
    return keyid


def load_configured_signer(settings: FarmSettings) -> Signer:
    """The farm's signing key: ``FARM_SIGNING_KEY``, or the embedded key, generated and trusted on first use.

    A configured key that does not exist is an error naming the file; only the embedded default
    is ever generated.
    """
    path = settings.signing_key_path
    if path.exists() or not settings.signing_key_is_embedded:
        return load_signer(path)
    try:
        pair = generate_key_pair(path.parent)
    except KeyFileError:
        return load_signer(path)  # another process generated it first
    trust_public_key(settings.trusted_signers_path, load_public_key(pair.public_key))
    return load_signer(path)


def load_configured_trust(settings: FarmSettings) -> TrustedSigners:
    """The trusted signers named by the settings."""
    return load_trusted_signers(settings.trusted_signers_path)
