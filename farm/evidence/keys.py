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
- **Keys fail closed.** The embedded default key is generated only for a home that holds no
  evidence (no trusted signer, no trust record, and no signed row in the database when the caller
  can tell); a home with evidence and no key is ``keys.missing``, and a signing key the trusted
  signers do not hold is ``keys.untrusted``: nothing is generated, trusted or signed.
- **The trust record** is an append-only file of JSON lines beside the trusted-signers file or
  folder (``<trusted signers>.log``): one line per change of trust, with who (the OS user), when
  (UTC), which key and what (``generated``, ``trusted``, ``rotated``, ``retired``). It lives with
  the list it describes: a change of trust is a change of that file, made by ``farm keys`` without
  a database, and a worker's trust is that file wherever its database is.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from farm.evidence.errors import EvidenceError
from farm.identity.canonical import sha256_hex

if TYPE_CHECKING:
    from farm.settings import FarmSettings

PRIVATE_KEY_NAME = "signing.key"
PUBLIC_KEY_NAME = "signing.pub"
RETIRED_KEYS_FOLDER = (
    "previous"  # beside signing.key: the keys rotation replaced, kept, never trusted again by it
)
TRUST_ACTIONS = ("generated", "trusted", "rotated", "retired")
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


def _make_folder(directory: Path, mode: int = 0o777) -> None:
    """``directory`` and its missing parents; where a file stands in the way, an error naming it
    (``mkdir`` said only "File exists" of a folder path that is a file)."""
    try:
        directory.mkdir(mode=mode, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        from farm.settings import file_in_the_way, not_a_folder

        blocker = file_in_the_way(directory)
        if blocker is None:
            raise
        raise not_a_folder(directory, blocker) from None


def generate_key_pair(directory: Path) -> KeyPairPaths:
    """Write a new ed25519 key pair into ``directory``; refuse to overwrite an existing key."""
    _make_folder(directory, mode=0o700)
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


def trust_public_key(trusted_path: Path, public_key: Ed25519PublicKey, *, record: bool = True) -> str:
    """Add ``public_key`` to the trusted-signers file or folder; return its key id. A key newly
    trusted is written to the trust record (unless ``record`` is False)."""
    keyid = keyid_for(public_key)
    if keyid in load_trusted_signers(trusted_path):
        return keyid
    pem = public_key_pem(public_key)
    if trusted_path.is_dir():
        (trusted_path / f"{keyid}.pub").write_text(pem, encoding="ascii")
    else:
        _make_folder(trusted_path.parent)
        with trusted_path.open("a", encoding="ascii") as handle:
            handle.write(f"# keyid {keyid}\n{pem}")
    if record:
        record_trust_change(trusted_path, "trusted", keyid)
    return keyid


def untrust_key(trusted_path: Path, keyid: str) -> None:
    """Remove ``keyid`` from the trusted-signers file or folder (the file is rewritten atomically)."""
    if keyid not in load_trusted_signers(trusted_path):
        raise KeyFileError(f"{trusted_path}: key {keyid} is not trusted there")
    if trusted_path.is_dir():
        for file in sorted([*trusted_path.glob("*.pub"), *trusted_path.glob("*.pem")]):
            kept = [key for key in _parse_trusted_file(file) if keyid_for(key) != keyid]
            if not kept:
                file.unlink()
            else:
                _replace_file(file, _trusted_text(kept))
        return
    kept = [key for key in _parse_trusted_file(trusted_path) if keyid_for(key) != keyid]
    _replace_file(trusted_path, _trusted_text(kept))


def _trusted_text(keys: list[Ed25519PublicKey]) -> str:
    return "".join(f"# keyid {keyid_for(key)}\n{public_key_pem(key)}" for key in keys)


def _replace_file(path: Path, text: str) -> None:
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        os.write(descriptor, text.encode("ascii"))
        os.fsync(descriptor)
        os.close(descriptor)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------------------------
# The trust record
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrustChange:
    """One line of the trust record."""

    at: str  # UTC, ISO 8601
    user: str  # the OS user who made the change
    action: str  # generated | trusted | rotated | retired
    keyid: str
    note: str = ""


def trust_record_path(trusted_path: Path) -> Path:
    """The append-only trust record beside the trusted-signers file or folder."""
    return trusted_path.with_name(trusted_path.name + ".log")


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's arbitrary uid)
        return f"uid {os.getuid()}"


def record_trust_change(trusted_path: Path, action: str, keyid: str, note: str = "") -> TrustChange:
    """Append one change of trust to the record (one JSON line, written with O_APPEND and fsync)."""
    if action not in TRUST_ACTIONS:
        raise ValueError(f"trust record: unknown action {action!r}")
    change = TrustChange(datetime.now(UTC).isoformat(timespec="seconds"), _os_user(), action, keyid, note)
    line = json.dumps(change.__dict__, sort_keys=True, separators=(",", ":")) + "\n"
    path = trust_record_path(trusted_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line.encode("utf-8"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    return change


def read_trust_record(trusted_path: Path) -> list[TrustChange]:
    """Every change of trust recorded beside ``trusted_path``, oldest first (none when absent)."""
    path = trust_record_path(trusted_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    changes = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            fields = json.loads(line)
            changes.append(TrustChange(**fields))
        except (ValueError, TypeError):
            raise KeyFileError(f"{path}: line {number} is not a trust record entry") from None
    return changes


# ---------------------------------------------------------------------------------------------
# The configured key: fail closed
# ---------------------------------------------------------------------------------------------


def load_configured_signer(
    settings: FarmSettings, *, holds_evidence: Callable[[], bool] | None = None
) -> Signer:
    """The farm's signing key (``FARM_SIGNING_KEY`` or the embedded one), refused unless trusted.

    The embedded key is generated and trusted on first use only for a home that holds no evidence:
    no trusted signer, no trust record, and (when the caller can tell, ``holds_evidence``) no
    signed row. Otherwise a missing key is ``keys.missing``; a configured key that does not exist
    is an error naming the file; a key the trusted signers do not hold is ``keys.untrusted``.
    """
    path = settings.signing_key_path
    trusted_path = settings.trusted_signers_path
    if not path.exists() and settings.signing_key_is_embedded:
        _generate_for_a_new_home(path, trusted_path, holds_evidence)
    signer = load_signer(path)
    trusted = load_trusted_signers(trusted_path)
    if signer.keyid not in trusted:
        known = ", ".join(sorted(trusted)) or "none"
        raise EvidenceError(
            "keys.untrusted",
            f"{path}: the signing key {signer.keyid} is not one the trusted signers ({trusted_path}) "
            f"hold (trusted: {known}); refusing to sign with it. Restore the trusted key, or make "
            "and trust a new one with farm keys rotate",
        )
    return signer


def _generate_for_a_new_home(
    path: Path, trusted_path: Path, holds_evidence: Callable[[], bool] | None
) -> None:
    trusted = load_trusted_signers(trusted_path)
    recorded = read_trust_record(trusted_path)
    if trusted or recorded or (holds_evidence is not None and holds_evidence()):
        keyids = sorted(set(trusted) | {change.keyid for change in recorded}) or [
            "(the trusted signers are gone)"
        ]
        raise EvidenceError(
            "keys.missing",
            f"{path}: no signing key, and this home already holds evidence (signed by "
            f"{', '.join(keyids)}): restore the key file from its backup, or run farm keys rotate "
            "to make and trust a new key (the old ones stay trusted for verification). "
            "No key was generated",
        )
    try:
        pair = generate_key_pair(path.parent)
    except KeyFileError:
        return  # another process generated it first
    record_trust_change(trusted_path, "generated", pair.keyid)
    trust_public_key(trusted_path, load_public_key(pair.public_key))


def rotate_signing_key(settings: FarmSettings) -> tuple[str | None, str]:
    """Make a new signing key, trust it, and keep the old one trusted for verification.

    The old ``signing.key``/``signing.pub`` move to ``previous/<keyid>.key``/``.pub`` beside them
    (never deleted). Works when the key is missing too: that is how a home whose key is lost goes
    on signing. Returns (old key id or None, new key id).
    """
    path = settings.signing_key_path
    trusted_path = settings.trusted_signers_path
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    old = load_signer(path) if path.exists() else None
    staging = Path(tempfile.mkdtemp(dir=folder, prefix=".rotate-"))
    try:
        pair = generate_key_pair(staging)
        record_trust_change(trusted_path, "generated", pair.keyid)
        trust_public_key(trusted_path, load_public_key(pair.public_key))
        public_path = (
            path.with_name(PUBLIC_KEY_NAME) if path.name == PRIVATE_KEY_NAME else path.with_suffix(".pub")
        )
        if old is not None:
            previous = folder / RETIRED_KEYS_FOLDER
            previous.mkdir(mode=0o700, exist_ok=True)
            os.link(path, previous / f"{old.keyid}.key")
            if public_path.exists():
                os.replace(public_path, previous / f"{old.keyid}.pub")
        os.replace(pair.public_key, public_path)
        os.replace(pair.private_key, path)
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()
    note = f"replaces {old.keyid}" if old is not None else "the signing key was missing"
    record_trust_change(trusted_path, "rotated", pair.keyid, note)
    return (old.keyid if old is not None else None), pair.keyid


def retire_key(settings: FarmSettings, keyid: str) -> None:
    """Stop trusting ``keyid``; the current signing key cannot be retired (rotate first)."""
    path = settings.signing_key_path
    if path.exists() and load_signer(path).keyid == keyid:
        raise KeyFileError(
            f"{path}: key {keyid} is the current signing key; run farm keys rotate first, then retire it"
        )
    untrust_key(settings.trusted_signers_path, keyid)
    record_trust_change(settings.trusted_signers_path, "retired", keyid)


def load_configured_trust(settings: FarmSettings) -> TrustedSigners:
    """The trusted signers named by the settings."""
    return load_trusted_signers(settings.trusted_signers_path)
