"""What a failing disk or someone with access to a home does to a local object store's blobs,
done to the storage itself (the SQLite file of small blobs, or a blob's file), never through the
store: tests of damage detection use these."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from farm.store.small_blobs import FILE_NAME


def _row(root: Path, digest: str) -> bytes | None:
    database = Path(root) / FILE_NAME
    if not database.exists():
        return None
    with sqlite3.connect(database) as connection:
        row = connection.execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
    connection.close()
    return None if row is None else bytes(row[0])


def _file(root: Path, digest: str) -> Path:
    return Path(root) / "sha256" / digest


def stored_bytes(root: Path, digest: str) -> bytes:
    """The bytes stored under ``digest``, as they are (not verified)."""
    row = _row(root, digest)
    return row if row is not None else _file(root, digest).read_bytes()


def overwrite_blob(root: Path, digest: str, data: bytes) -> None:
    """Replace the stored bytes of ``digest`` with ``data`` where the store keeps them."""
    if _row(root, digest) is not None:
        with sqlite3.connect(Path(root) / FILE_NAME) as connection:
            connection.execute(
                "UPDATE blobs SET data = ?, size = ? WHERE digest = ?", (data, len(data), digest)
            )
        connection.close()
        return
    path = _file(root, digest)
    os.chmod(path, 0o644)
    path.write_bytes(data)


def remove_blob(root: Path, digest: str) -> None:
    """Take the blob ``digest`` away (its row or its file); it must be there."""
    if _row(root, digest) is not None:
        with sqlite3.connect(Path(root) / FILE_NAME) as connection:
            connection.execute("DELETE FROM blobs WHERE digest = ?", (digest,))
        connection.close()
        return
    _file(root, digest).unlink()


def flip_a_byte(root: Path, digest: str) -> None:
    """One bit of the stored blob changed, in its middle."""
    data = bytearray(stored_bytes(root, digest))
    data[len(data) // 2] ^= 0x01
    overwrite_blob(root, digest, bytes(data))
