"""Content-addressed blob storage: the ``ObjectStore`` protocol, a local folder and S3.

A blob lives under the key ``sha256/<hex>`` where ``<hex>`` is the sha256 of its bytes. Blobs are
written once: a put of a digest that is already stored reads the stored copy back and leaves it
alone if it verifies (a stored copy that does not verify is replaced by the good bytes, which is
the only way a key is ever written twice). Every read is verified; a missing blob raises
``BlobMissingError`` and a blob whose bytes do not hash to its key raises ``BlobCorruptError``,
both naming the digest.

Local blobs are readable by their owner only (files 0400, folders 0700). Writes are atomic: the
local store writes a temporary file in the same folder, fsyncs it and ``os.replace``s it into
place, then fsyncs the folder so the new name is durable before ``put`` returns (and so before any
row that points at the blob commits); an S3 PUT is never visible half-written, and it carries the
sha256 checksum so the server refuses bytes damaged in transit. ``put_many`` stores several blobs
with one ``syncfs(2)`` before it returns, on Linux (see ``LocalObjectStore._put_batch``).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import errno
import itertools
import os
import secrets
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from farm.identity.canonical import is_hex_digest, sha256_hex
from farm.settings import make_private_folder
from farm.store.small_blobs import SmallBlobs, SmallBlobsError

if TYPE_CHECKING:
    from farm.settings import FarmSettings

KEY_PREFIX = "sha256/"
_In = TypeVar("_In")
_Out = TypeVar("_Out")
# temporary names unique in this process (with the pid, on the host: O_EXCL refuses a clash)
_TEMPORARY_NAMES = itertools.count(secrets.randbits(32))
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_S3_CONCURRENCY = 16  # S3 requests in flight at once when storing or asking for many blobs
# from this many digests on, ``S3ObjectStore.missing`` lists the bucket instead of a HEAD per
# digest: a listing of 1,000 keys costs about what one HEAD does
_LIST_FROM = 1000
# a conditional PUT (If-None-Match: *) refused because the key exists (S3, MinIO: 412; a write
# racing another: 409), or because the server does not take the condition
_KEY_TAKEN = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})
_NO_CONDITIONAL_WRITES = frozenset({"NotImplemented", "501"})


class ObjectStoreError(RuntimeError):
    """Object storage failed; the message names the digest and the store."""


STORE_FULL, STORE_UNAVAILABLE = "store.full", "store.unavailable"
# what a write to the store's medium answers when the store, not the blob, is the problem
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_UNAVAILABLE_ERRNOS = frozenset({errno.EROFS, errno.EIO})


class ObjectStoreUnavailableError(ObjectStoreError):
    """A write the store's medium refused: full (``store.full``: ENOSPC, EDQUOT), read-only or
    failing (``store.unavailable``: EROFS, EIO). An infrastructure error: retried, never a target's."""

    def __init__(
        self, error: OSError, store: str, *, reason: str | None = None, refused: str = "a write"
    ) -> None:
        self.code = STORE_FULL if error.errno in _FULL_ERRNOS else STORE_UNAVAILABLE
        if reason is None:
            reason = os.strerror(error.errno) if error.errno else str(error)
        super().__init__(f"{store} refused {refused}: {reason} [{self.code}]")


def _refused_write(error: OSError) -> bool:
    return error.errno in _FULL_ERRNOS | _UNAVAILABLE_ERRNOS


class BlobMissingError(ObjectStoreError):
    def __init__(self, digest: str, store: str) -> None:
        super().__init__(f"blob {KEY_PREFIX}{digest} is missing from {store}")
        self.digest = digest


class BlobCorruptError(ObjectStoreError):
    def __init__(self, digest: str, actual: str, size: int, store: str) -> None:
        super().__init__(
            f"blob {KEY_PREFIX}{digest} in {store} is corrupt: its {size} bytes hash to sha256 {actual}"
        )
        self.digest = digest
        self.actual = actual


@dataclass(frozen=True)
class BlobInfo:
    digest: str
    size: int
    modified: datetime


def blob_key(digest: str) -> str:
    """``sha256/<hex>``; refuses anything that is not a lowercase sha256 hex digest."""
    if not is_hex_digest(digest):
        raise ValueError(f"not a sha256 digest (64 lowercase hex characters): {digest!r}")
    return KEY_PREFIX + digest


@runtime_checkable
class ObjectStore(Protocol):
    """Content-addressed, write-once blob storage."""

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) and return its sha256 hex digest."""
        ...

    def put_many(self, blobs: Sequence[bytes], digests: Sequence[str] | None = None) -> list[str]:
        """``put`` each of ``blobs``; every one is durably stored when this returns. Their digests.

        ``digests``: the blobs' sha256 digests, when the caller has just computed them from these
        bytes (a worker hashes each output once, to sign it): they are not computed again."""
        ...

    def get(self, digest: str) -> bytes:
        """The verified bytes of ``digest``; ``BlobMissingError``/``BlobCorruptError`` otherwise."""
        ...

    def exists(self, digest: str) -> bool:
        """Whether a blob is stored under ``digest`` (without reading or verifying it)."""
        ...

    def missing(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` have no blob stored (``exists`` for many, in one call)."""
        ...

    def delete(self, digest: str) -> None:
        """Remove a blob (only the garbage collector does this); absent blobs are fine."""
        ...

    def list_blobs(self) -> Iterator[BlobInfo]:
        """Every stored blob under the ``sha256/`` prefix, listed lazily, in no promised order."""
        ...

    def describe(self) -> str:
        """Where the store is, for messages."""
        ...


def _verified(digest: str, data: bytes, store: str) -> bytes:
    actual = sha256_hex(data)
    if actual != digest:
        raise BlobCorruptError(digest, actual, len(data), store)
    return data


# Blobs up to this size are rows of the store's small-blob file (``farm.store.small_blobs``),
# larger ones files: SQLite reads and writes blobs below about 100 KiB faster than a filesystem
# does, and each row spares the filesystem an inode.
SMALL_BLOB_BYTES = 128 * 1024


class LocalObjectStore:
    """Blobs in a folder: each of at most ``SMALL_BLOB_BYTES`` as a row of ``root/small-blobs.db``
    (``farm.store.small_blobs``), each larger one as the file ``root/sha256/<hex>``. A small blob
    an earlier farm wrote as a file stays one: it is read, kept, listed and removed where it is."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._small = SmallBlobs(self.root)

    def describe(self) -> str:
        return f"local object store {self.root}"

    def _path(self, digest: str) -> Path:
        return self.root / blob_key(digest)

    def put(self, data: bytes) -> str:
        return self.put_many([data])[0]

    def put_many(self, blobs: Sequence[bytes], digests: Sequence[str] | None = None) -> list[str]:
        known = _digests_of(blobs, digests)
        small: list[tuple[str, bytes]] = []
        large_blobs: list[bytes] = []
        large_digests: list[str] = []
        for data, digest in zip(blobs, known, strict=True):
            if len(data) <= SMALL_BLOB_BYTES:
                small.append((digest, data))
            else:
                large_blobs.append(data)
                large_digests.append(digest)
        try:
            self._put_small(small)
            if len(large_blobs) > 1 and _SYNCFS is not None:
                self._put_batch(large_blobs, large_digests)
            elif large_blobs:
                self._put_each(large_blobs, large_digests)
        except OSError as error:
            if _refused_write(error):
                raise ObjectStoreUnavailableError(error, self.describe()) from error
            raise
        return known

    def _put_small(self, blobs: list[tuple[str, bytes]]) -> None:
        """Rows for the small blobs, but a good copy an earlier farm stored as a file stays the one
        (its age refreshed); a bad one is removed once the row holds the good bytes."""
        folder = f"{self.root}/{KEY_PREFIX}"
        as_files = [digest for digest, _ in blobs if os.path.exists(folder + digest)]
        kept = {digest for digest in as_files if self._keep_stored_copy(digest, folder + digest)}
        rows = [(digest, data) for digest, data in blobs if digest not in kept]
        if not rows:
            return
        make_private_folder(self.root)
        self._on_small_blobs(self._small.put, rows, "a write")
        for digest in set(as_files) - kept:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(folder + digest)

    def _put_each(self, blobs: Sequence[bytes], digests: list[str]) -> list[str]:
        written: dict[Path, str] = {}  # final path → its fsynced temporary file, not yet renamed
        try:
            for data, digest in zip(blobs, digests, strict=True):
                path = self._path(digest)
                if path in written or self._keep_stored_copy(digest, str(path)):
                    continue
                make_private_folder(path.parent)
                written[path] = self._write_temporary(str(path), data, fsync=True)
            folders = {path.parent for path in written}  # the folders whose entries change
            while written:  # renamed only once every new blob's bytes are on disk
                path, temp_name = next(iter(written.items()))
                os.replace(temp_name, path)
                del written[path]
        except BaseException:
            _remove_temporaries(written.values())
            raise
        for folder in folders:  # the renames are durable only once the folder entries are on disk
            _fsync_directory(folder)
        return digests

    def _put_batch(self, blobs: Sequence[bytes], digests: list[str]) -> list[str]:
        """Several blobs, made durable with one ``syncfs(2)`` of the store's filesystem (Linux): a
        journal commit per batch, not an fsync per blob and folder.

        Each new blob is written to a temporary file and renamed into place at once; the one
        flush comes before this returns, so before any row that points at a blob commits. A crash
        before the flush can leave a torn blob under its final name, but no row names it: every
        read verifies its digest, and the next put of that digest finds the stored copy bad and
        writes it again. A blob a twin stored meanwhile is flushed too before rows point at it.
        """
        folder = f"{self.root}/{KEY_PREFIX}"
        make_private_folder(Path(folder))
        handled: set[str] = set()  # a batch's outputs repeat (one application's identical clusters)
        temp_name = ""
        try:
            for data, digest in zip(blobs, digests, strict=True):
                if digest in handled:
                    continue
                handled.add(digest)
                path = folder + digest
                if self._keep_stored_copy(digest, path):
                    continue
                temp_name = self._write_temporary(path, data, fsync=False)
                os.replace(temp_name, path)
                temp_name = ""
        except BaseException:
            _remove_temporaries([temp_name] if temp_name else [])
            raise
        _sync_filesystem(self.root)
        return digests

    def _keep_stored_copy(self, digest: str, path: str) -> bool:
        """True when ``path`` holds a good copy of the blob (its age refreshed, so a sweep does not
        take a blob that a new row is about to claim); False when it must be written."""
        if not os.path.exists(path) or not self._stored_copy_is_good(digest):
            return False
        os.utime(path)
        return True

    def _stored_copy_is_good(self, digest: str) -> bool:
        try:
            self.get(digest)
        except ObjectStoreError:
            return False
        return True

    @staticmethod
    def _write_temporary(path: str, data: bytes, *, fsync: bool = True) -> str:
        """A temporary file beside ``path`` holding ``data`` (fsynced unless the caller flushes the
        whole filesystem itself), readable by its owner only (mode 0400, in a 0700 folder); its name.

        One exclusive create with the final mode: no other writer (a twin storing the same blob)
        can share the file, and no chmod follows.
        """
        folder, _, name = path.rpartition("/")
        temp_name = f"{folder}/.tmp-{name[:16]}-{os.getpid()}-{next(_TEMPORARY_NAMES)}.part"
        descriptor = os.open(temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o400)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
            if fsync:
                os.fsync(descriptor)
        except BaseException:
            os.close(descriptor)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
            raise
        os.close(descriptor)
        return temp_name

    def get(self, digest: str) -> bytes:
        path = self._path(digest)  # refuses a value that is not a digest
        data = self._on_small_blobs(self._small.get, digest)
        if data is None:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                raise BlobMissingError(digest, self.describe()) from None
        return _verified(digest, data, self.describe())

    def exists(self, digest: str) -> bool:
        path = self._path(digest)
        return self._on_small_blobs(self._small.holds, digest) or path.is_file()

    def missing(self, digests: Iterable[str]) -> set[str]:
        wanted = list(digests)
        for digest in wanted:
            blob_key(digest)  # refuses a value that is not a digest, as every other call does
        held = self._on_small_blobs(self._small.held, wanted)
        folder = f"{self.root}/{KEY_PREFIX}"
        absent = set()
        for digest in wanted:
            if digest in held:
                continue
            try:
                if not stat.S_ISREG(os.stat(folder + digest).st_mode):
                    absent.add(digest)
            except FileNotFoundError:
                absent.add(digest)
        return absent

    def delete(self, digest: str) -> None:
        path = self._path(digest)
        self._on_small_blobs(self._small.delete, digest, "a write")
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    def list_blobs(self) -> Iterator[BlobInfo]:
        """The rows, then the files (a blob is one or the other: ``_put_small``)."""
        rows = self._small.listed()
        while True:
            try:
                listed = self._on_small_blobs(next, rows)
            except StopIteration:
                break
            yield BlobInfo(*listed)
        folder = self.root / KEY_PREFIX
        if not folder.is_dir():
            return
        with os.scandir(folder) as entries:  # lazily: a fleet's folder holds 100,000s of blobs
            for entry in entries:
                if is_hex_digest(entry.name) and entry.is_file():
                    info = entry.stat()
                    yield BlobInfo(entry.name, info.st_size, datetime.fromtimestamp(info.st_mtime, UTC))

    def _on_small_blobs(self, call: Callable[[_In], _Out], argument: _In, doing: str = "a read") -> _Out:
        """``call(argument)`` on the small-blob file; its failure an ``ObjectStoreError``, an
        ``ObjectStoreUnavailableError`` when the medium refused (full, read-only, failing,
        damaged): an infrastructure error, whose job is queued again."""
        try:
            return call(argument)
        except SmallBlobsError as error:
            if not error.refused:
                raise ObjectStoreError(str(error)) from error
            medium = OSError(errno.ENOSPC if error.full else errno.EIO, str(error))
            raise ObjectStoreUnavailableError(
                medium, self.describe(), reason=str(error), refused=doing
            ) from error


def _remove_temporaries(names: Iterable[str]) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def _load_syncfs() -> Any:
    try:
        # the C library already loaded into this process (find_library would run ldconfig -p)
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syncfs
    except (OSError, AttributeError):  # not Linux: fsync per file and folder instead
        return None


_SYNCFS = _load_syncfs() if sys.platform.startswith("linux") else None


def _digests_of(blobs: Sequence[bytes], digests: Sequence[str] | None) -> list[str]:
    """The sha256 digest of each blob: ``digests`` when the caller gives them (one per blob, each a
    digest), else computed."""
    if digests is None:
        return [sha256_hex(data) for data in blobs]
    if len(digests) != len(blobs):
        raise ValueError(f"put_many: {len(digests)} digests for {len(blobs)} blobs")
    for digest in digests:
        blob_key(digest)  # refuses a value that is not a digest
    return list(digests)


def _sync_filesystem(folder: Path) -> None:
    """Flush every dirty page and directory entry of the filesystem holding ``folder``."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        if _SYNCFS(descriptor) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"syncfs of {folder}: {os.strerror(error)}")
    finally:
        os.close(descriptor)


def _fsync_directory(folder: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class S3ObjectStore:
    """Blobs as objects ``[prefix/]sha256/<hex>`` in an S3 (or MinIO) bucket."""

    def __init__(self, client: Any, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self._conditional_writes = True  # until the server refuses an If-None-Match PUT

    def describe(self) -> str:
        location = f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket
        return f"S3 object store s3://{location}"

    def _key(self, digest: str) -> str:
        key = blob_key(digest)
        return f"{self.prefix}/{key}" if self.prefix else key

    def put(self, data: bytes) -> str:
        """One request for a new blob: a PUT only if no object has the key (``If-None-Match: *``);
        a key already there is read back and kept when its bytes are good, rewritten otherwise.
        A server that does not take conditional writes is asked with a HEAD first instead."""
        return self._put_known(data, sha256_hex(data))

    def _put_known(self, data: bytes, digest: str) -> str:
        """``put`` of ``data``, whose sha256 is ``digest``."""
        from botocore.exceptions import ClientError

        if not self._conditional_writes:
            if self.exists(digest) and self._stored_copy_is_good(digest):
                return digest
            self._put_object(digest, data)
            return digest
        try:
            self._put_object(digest, data, IfNoneMatch="*")
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            if code in _NO_CONDITIONAL_WRITES:
                self._conditional_writes = False
                return self._put_known(data, digest)
            if code not in _KEY_TAKEN:
                raise
            if not self._stored_copy_is_good(digest):
                self._put_object(digest, data)
        return digest

    def _put_object(self, digest: str, data: bytes, **condition: str) -> None:
        checksum = base64.b64encode(bytes.fromhex(digest)).decode("ascii")
        self.client.put_object(
            Bucket=self.bucket, Key=self._key(digest), Body=data, ChecksumSHA256=checksum, **condition
        )

    def put_many(self, blobs: Sequence[bytes], digests: Sequence[str] | None = None) -> list[str]:
        # a PUT is durable once S3 acknowledges it; several in flight at once (a snapshot's documents
        # and request packs), each blob once
        known = _digests_of(blobs, digests)
        unique = dict(zip(known, blobs, strict=True))
        if len(unique) > 1:
            with ThreadPoolExecutor(max_workers=_S3_CONCURRENCY) as pool:
                list(pool.map(self._put_known, unique.values(), unique))
        else:
            for digest, data in unique.items():
                self._put_known(data, digest)
        return known

    def _stored_copy_is_good(self, digest: str) -> bool:
        try:
            self.get(digest)
        except ObjectStoreError:
            return False
        return True

    def get(self, digest: str) -> bytes:
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=self._key(digest))
        except self.client.exceptions.NoSuchKey:
            raise BlobMissingError(digest, self.describe()) from None
        return _verified(digest, response["Body"].read(), self.describe())

    def exists(self, digest: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(digest))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def missing(self, digests: Iterable[str]) -> set[str]:
        unique = sorted(set(digests))
        for digest in unique:
            blob_key(digest)  # refuses a value that is not a digest, as every other call does
        if len(unique) < _LIST_FROM:
            # one HEAD per digest, several in flight at once (a boto3 client is thread-safe)
            with ThreadPoolExecutor(max_workers=_S3_CONCURRENCY) as pool:
                present = list(pool.map(self.exists, unique))
            return {digest for digest, found in zip(unique, present, strict=True) if not found}
        return set(unique) - self._listed(set(unique))

    def _listed(self, wanted: set[str]) -> set[str]:
        """Which of ``wanted`` the bucket holds, from listings: a LIST names up to 1,000 keys where
        a HEAD asks about one, so a no-change re-run of a large fleet (tens of thousands of cached
        outputs) asks a few hundred questions, not one per output. Sixteen listings in flight, one
        per first hex digit of the digest."""
        listing_prefix = self._key("0" * 64)[:-64]
        firsts = sorted({digest[0] for digest in wanted})

        def listed(first: str) -> set[str]:
            found = set()
            paginator = self.client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=listing_prefix + first):
                for item in page.get("Contents", []):
                    digest = item["Key"][len(listing_prefix) :]
                    if digest in wanted:
                        found.add(digest)
            return found

        with ThreadPoolExecutor(max_workers=_S3_CONCURRENCY) as pool:
            return set().union(*pool.map(listed, firsts))

    def delete(self, digest: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(digest))

    def list_blobs(self) -> Iterator[BlobInfo]:
        listing_prefix = self._key("0" * 64)[:-64]
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=listing_prefix):
            for item in page.get("Contents", []):
                digest = item["Key"][len(listing_prefix) :]
                if is_hex_digest(digest):
                    yield BlobInfo(digest, item["Size"], item["LastModified"])


def parse_s3_location(location: str) -> tuple[str, str]:
    """``s3://bucket[/prefix]`` → (bucket, prefix); names the setting on a bad value."""
    rest = location.removeprefix("s3://")
    bucket, _, prefix = rest.partition("/")
    if not location.startswith("s3://") or not bucket:
        raise ValueError(f"FARM_OBJECT_STORE: expected s3://bucket[/prefix], got {location!r}")
    return bucket, prefix.strip("/")


def s3_client(settings: FarmSettings) -> Any:
    """A boto3 S3 client from the settings: FARM_S3_ACCESS_KEY_ID/FARM_S3_SECRET_ACCESS_KEY when
    set, otherwise boto3's normal chain (AWS_* variables, profiles, roles)."""
    import boto3
    from botocore.config import Config

    config = Config(s3={"addressing_style": "path"}) if settings.s3_endpoint_url else None
    secret = settings.s3_secret_access_key
    return boto3.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region,
        aws_access_key_id=settings.s3_access_key_id,
        aws_secret_access_key=secret.get_secret_value() if secret is not None else None,
        config=config,
    )


def open_object_store(settings: FarmSettings) -> ObjectStore:
    """The object store the settings name: S3 for ``s3://…``, otherwise a local folder."""
    if settings.uses_s3:
        bucket, prefix = parse_s3_location(settings.object_store)
        return S3ObjectStore(s3_client(settings), bucket, prefix)
    return LocalObjectStore(Path(settings.object_store))
