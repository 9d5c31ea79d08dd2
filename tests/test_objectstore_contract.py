"""The ObjectStore contract, run against the local folder and a real S3 server (moto on loopback)."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from conftest_store import S3Bucket
from s3_proxy import WriteRefusingProxy
from stored_blobs import overwrite_blob, stored_bytes

from farm.identity.canonical import sha256_hex
from farm.settings import load_settings
from farm.store.objects import (
    SMALL_BLOB_BYTES,
    BlobCorruptError,
    BlobMissingError,
    LocalObjectStore,
    ObjectStore,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    S3ObjectStore,
    open_object_store,
    parse_s3_location,
)


def test_put_returns_the_digest_and_get_returns_the_bytes(object_store: ObjectStore) -> None:
    digest = object_store.put(b"kind: ConfigMap\n")
    assert digest == sha256_hex(b"kind: ConfigMap\n")
    assert object_store.get(digest) == b"kind: ConfigMap\n"
    assert object_store.exists(digest)
    assert isinstance(object_store, ObjectStore)


def test_empty_blob_round_trips(object_store: ObjectStore) -> None:
    assert object_store.get(object_store.put(b"")) == b""


def test_put_is_write_once(object_store: ObjectStore) -> None:
    first = object_store.put(b"same")
    second = object_store.put(b"same")
    assert first == second
    assert [blob.digest for blob in object_store.list_blobs()] == [first]


def test_missing_blob_names_its_digest(object_store: ObjectStore) -> None:
    digest = sha256_hex(b"never stored")
    assert not object_store.exists(digest)
    with pytest.raises(BlobMissingError, match=f"sha256/{digest} is missing"):
        object_store.get(digest)


def test_list_and_delete(object_store: ObjectStore) -> None:
    digests = sorted(object_store.put(data) for data in (b"a", b"bb", b"ccc"))
    listed = sorted(object_store.list_blobs(), key=lambda blob: blob.digest)
    assert [blob.digest for blob in listed] == digests
    assert {blob.size for blob in listed} == {1, 2, 3}
    assert all(blob.modified.tzinfo is not None for blob in listed)
    object_store.delete(digests[0])
    object_store.delete(digests[0])  # deleting an absent blob is fine
    assert not object_store.exists(digests[0])


def test_put_many_returns_the_digests_in_order_and_stores_each_blob_once(object_store: ObjectStore) -> None:
    already = object_store.put(b"stored before")
    blobs = [b"one", b"two", b"one", b"stored before", *(b"blob %d" % n for n in range(20))]
    digests = object_store.put_many(blobs)
    assert digests == [sha256_hex(data) for data in blobs]
    assert sorted(blob.digest for blob in object_store.list_blobs()) == sorted({already, *digests})
    assert all(object_store.get(digest) == data for digest, data in zip(digests, blobs, strict=True))


def test_put_many_with_the_digests_the_caller_computed_stores_each_blob_under_its_digest(
    object_store: ObjectStore,
) -> None:
    blobs = [b"out %d" % n for n in range(5)] + [b"out 0"]
    digests = [sha256_hex(blob) for blob in blobs]
    assert object_store.put_many(blobs, digests) == digests
    assert sorted(blob.digest for blob in object_store.list_blobs()) == sorted(set(digests))
    assert [object_store.get(digest) for digest in digests] == blobs


@pytest.mark.parametrize(
    ("digests", "fragment"),
    [
        ([sha256_hex(b"a")], "1 digests for 2 blobs"),
        ([sha256_hex(b"a"), "not-a-digest"], "not a sha256 digest"),
    ],
)
def test_put_many_refuses_digests_that_do_not_name_each_blob_and_stores_nothing(
    object_store: ObjectStore, digests: list[str], fragment: str
) -> None:
    with pytest.raises(ValueError, match=fragment):
        object_store.put_many([b"a", b"b"], digests)
    assert list(object_store.list_blobs()) == []


def test_missing_names_exactly_the_digests_that_have_no_blob(object_store: ObjectStore) -> None:
    stored = [object_store.put(data) for data in (b"a", b"bb", b"ccc")]
    absent = [sha256_hex(b"never stored"), sha256_hex(b"nor this")]
    object_store.delete(stored[1])
    assert object_store.missing([*stored, *absent, stored[0]]) == {stored[1], *absent}
    assert object_store.missing([]) == set()


def test_missing_of_many_digests_names_exactly_those_without_a_blob(object_store: ObjectStore) -> None:
    stored = object_store.put_many([b"blob %d" % n for n in range(40)])
    object_store.delete(stored[0])
    absent = [sha256_hex(b"never stored %d" % n) for n in range(1100)]
    assert object_store.missing([*stored, *absent]) == {stored[0], *absent}


def test_s3_missing_of_many_digests_lists_the_prefix_instead_of_a_head_per_digest(
    s3_store: S3ObjectStore, s3_bucket: S3Bucket
) -> None:
    stored = s3_store.put_many([b"blob %d" % n for n in range(30)])
    outside = S3ObjectStore(s3_bucket.client, s3_bucket.name, "elsewhere").put(b"under another prefix")
    asked = [*stored, outside, *(sha256_hex(b"never stored %d" % n) for n in range(1500))]
    calls: list[str] = []
    s3_bucket.client.meta.events.register("before-call.s3", lambda model, **_: calls.append(model.name))
    assert s3_store.missing(asked) == set(asked) - set(stored)
    assert "HeadObject" not in calls
    assert 0 < calls.count("ListObjectsV2") <= 16  # one listing per first hex digit, each one page here


def test_missing_refuses_a_value_that_is_not_a_digest(object_store: ObjectStore) -> None:
    with pytest.raises(ValueError, match="not a sha256 digest"):
        object_store.missing(["../" + "a" * 61])


@pytest.mark.parametrize("bad", ["", "abc", "A" * 64, "../" + "a" * 61, "sha256:" + "a" * 64])
def test_a_bad_digest_is_refused(object_store: ObjectStore, bad: str) -> None:
    with pytest.raises(ValueError, match="not a sha256 digest"):
        object_store.get(bad)


# --- corruption, through each backend's own storage -------------------------------------------


def _overwrite_local(store: LocalObjectStore, digest: str, data: bytes) -> None:
    overwrite_blob(store.root, digest, data)


def test_local_corrupt_and_truncated_blobs_name_their_digest(local_store: LocalObjectStore) -> None:
    digest = local_store.put(b"0123456789")
    _overwrite_local(local_store, digest, b"0123456788")
    with pytest.raises(BlobCorruptError, match=f"sha256/{digest} in local object store .* is corrupt"):
        local_store.get(digest)
    _overwrite_local(local_store, digest, b"01234")
    with pytest.raises(BlobCorruptError, match="its 5 bytes hash to"):
        local_store.get(digest)


def test_s3_corrupt_blob_names_its_digest(s3_store: S3ObjectStore, s3_bucket: S3Bucket) -> None:
    digest = s3_store.put(b"0123456789")
    s3_bucket.client.put_object(Bucket=s3_bucket.name, Key=f"farm/sha256/{digest}", Body=b"01234")  # type: ignore[attr-defined]
    with pytest.raises(
        BlobCorruptError, match=f"sha256/{digest} in S3 object store s3://{s3_bucket.name}/farm"
    ):
        s3_store.get(digest)


def test_put_repairs_a_corrupt_copy_with_the_right_bytes(local_store: LocalObjectStore) -> None:
    digest = local_store.put(b"good bytes")
    _overwrite_local(local_store, digest, b"bad bytes")
    assert local_store.put(b"good bytes") == digest
    assert local_store.get(digest) == b"good bytes"


def test_s3_put_repairs_a_corrupt_copy(s3_store: S3ObjectStore, s3_bucket: S3Bucket) -> None:
    digest = s3_store.put(b"good bytes")
    s3_bucket.client.put_object(Bucket=s3_bucket.name, Key=f"farm/sha256/{digest}", Body=b"bad")  # type: ignore[attr-defined]
    s3_store.put(b"good bytes")
    assert s3_store.get(digest) == b"good bytes"


# --- backend specifics ------------------------------------------------------------------------


def test_a_local_small_blob_is_a_row_of_an_owner_only_database_and_no_file(
    local_store: LocalObjectStore,
) -> None:
    digest = local_store.put(b"payload")
    assert stored_bytes(local_store.root, digest) == b"payload"
    assert not (local_store.root / "sha256").exists()  # no file, no inode spent on it
    database = local_store.root / "small-blobs.db"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600  # private to its owner
    assert stat.S_IMODE(local_store.root.stat().st_mode) == 0o700


def test_a_local_blob_larger_than_the_small_limit_is_a_read_only_sha256_hex_file(
    local_store: LocalObjectStore,
) -> None:
    data = b"x" * (SMALL_BLOB_BYTES + 1)
    digest = local_store.put(data)
    path = local_store.root / "sha256" / digest
    assert path.read_bytes() == data
    assert stat.S_IMODE(path.stat().st_mode) == 0o400  # read-only, and private to its owner
    assert sorted(p.name for p in (local_store.root / "sha256").iterdir()) == [digest]  # no temporaries
    assert local_store.get(digest) == data and [b.digest for b in local_store.list_blobs()] == [digest]


def test_a_small_blob_an_earlier_farm_wrote_as_a_file_is_read_kept_listed_and_removed_as_one(
    local_store: LocalObjectStore,
) -> None:
    data = b"written before small blobs were rows\n"
    digest = hashlib.sha256(data).hexdigest()
    folder = local_store.root / "sha256"
    folder.mkdir(parents=True)
    (folder / digest).write_bytes(data)
    assert local_store.get(digest) == data and local_store.exists(digest)
    assert local_store.missing([digest]) == set()
    assert local_store.put(data) == digest  # the good file stays the copy: no second one as a row
    assert [blob.digest for blob in local_store.list_blobs()] == [digest]
    local_store.delete(digest)
    assert not local_store.exists(digest) and not (folder / digest).exists()


def test_a_corrupt_file_copy_of_a_small_blob_is_replaced_by_a_row_of_the_good_bytes(
    local_store: LocalObjectStore,
) -> None:
    data = b"good bytes\n"
    digest = hashlib.sha256(data).hexdigest()
    (local_store.root / "sha256").mkdir(parents=True)
    (local_store.root / "sha256" / digest).write_bytes(b"torn")
    local_store.put(data)
    assert local_store.get(digest) == data
    assert not (local_store.root / "sha256" / digest).exists()
    assert [blob.digest for blob in local_store.list_blobs()] == [digest]  # listed once


def test_a_small_blob_put_by_one_process_is_read_by_another(local_store: LocalObjectStore) -> None:
    script = (
        "import sys; from pathlib import Path; from farm.store.objects import LocalObjectStore; "
        "print(LocalObjectStore(Path(sys.argv[1])).put(b'from another process'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(local_store.root)], capture_output=True, text=True, check=True
    )
    digest = done.stdout.strip()
    assert local_store.get(digest) == b"from another process"


def test_deleting_small_blobs_gives_their_pages_back_to_the_filesystem(local_store: LocalObjectStore) -> None:
    digests = local_store.put_many([os.urandom(3000) for _ in range(300)])
    database = local_store.root / "small-blobs.db"

    def file_bytes() -> int:
        with sqlite3.connect(database) as connection:  # the log's pages written into the file
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        return database.stat().st_size

    full = file_bytes()
    for digest in digests[30:]:
        local_store.delete(digest)
    assert file_bytes() < full / 5  # as removing 270 files would free their space
    assert [local_store.get(digest) for digest in digests[:30]]  # the rest still read back


def test_a_store_that_was_only_read_creates_no_database(local_store: LocalObjectStore) -> None:
    digest = hashlib.sha256(b"never stored").hexdigest()
    assert not local_store.exists(digest) and local_store.missing([digest]) == {digest}
    assert list(local_store.list_blobs()) == []
    local_store.delete(digest)
    assert not (local_store.root / "small-blobs.db").exists()


def test_a_damaged_small_blob_database_is_an_object_store_error_naming_it(
    local_store: LocalObjectStore,
) -> None:
    digest = local_store.put(b"payload")
    database = local_store.root / "small-blobs.db"
    fresh = LocalObjectStore(local_store.root)  # a process that opens the file after the damage
    for name in ("small-blobs.db-wal", "small-blobs.db-shm"):
        (local_store.root / name).unlink(missing_ok=True)
    database.write_bytes(b"this is not a database" * 300)
    with pytest.raises(ObjectStoreError, match="small-blobs.db: could not .* the small-blob database"):
        fresh.get(digest)
    with pytest.raises(ObjectStoreUnavailableError, match=r"small-blobs.db.*\[store.unavailable\]"):
        fresh.put(b"another")


def test_a_full_disk_under_the_small_blob_database_is_store_full(local_store: LocalObjectStore) -> None:
    local_store.put(b"first")
    # a file that may not grow is SQLite's disk full; the limit holds for the connection that
    # sets it: the store's own
    connection = local_store._small._connection(create=False)  # noqa: SLF001 - the store's connection
    assert connection is not None
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(ObjectStoreUnavailableError, match=r"\[store.full\]") as refused:
        local_store.put_many([os.urandom(3000) for _ in range(20)])
    assert refused.value.code == "store.full"
    assert local_store.get(hashlib.sha256(b"first").hexdigest()) == b"first"  # nothing else lost


def test_local_list_ignores_stray_files(local_store: LocalObjectStore) -> None:
    digest = local_store.put(b"x")
    (local_store.root / "sha256").mkdir()
    (local_store.root / "sha256" / ".tmp-123.part").write_bytes(b"half")
    assert [blob.digest for blob in local_store.list_blobs()] == [digest]


def test_s3_keys_live_under_the_prefix(s3_store: S3ObjectStore, s3_bucket: S3Bucket) -> None:
    digest = s3_store.put(b"payload")
    listing = s3_bucket.client.list_objects_v2(Bucket=s3_bucket.name)  # type: ignore[attr-defined]
    assert [item["Key"] for item in listing["Contents"]] == [f"farm/sha256/{digest}"]


def test_s3_store_without_prefix(s3_bucket: S3Bucket) -> None:
    store = S3ObjectStore(s3_bucket.client, s3_bucket.name)
    digest = store.put(b"root")
    assert [blob.digest for blob in store.list_blobs()] == [digest]
    assert s3_bucket.client.head_object(Bucket=s3_bucket.name, Key=f"sha256/{digest}")  # type: ignore[attr-defined]


def test_object_store_from_settings(tmp_path: Path, s3_bucket: S3Bucket) -> None:
    local = open_object_store(load_settings(home=tmp_path))
    assert isinstance(local, LocalObjectStore) and local.root == tmp_path / "objects"
    remote = open_object_store(
        load_settings(
            object_store=f"s3://{s3_bucket.name}/p/q",
            s3_endpoint_url=s3_bucket.endpoint,
            s3_region="us-east-1",
        )
    )
    assert isinstance(remote, S3ObjectStore) and remote.prefix == "p/q"
    digest = remote.put(b"through settings")
    assert (
        s3_bucket.client.get_object(Bucket=s3_bucket.name, Key=f"p/q/sha256/{digest}")["Body"].read()
        == b"through settings"
    )  # type: ignore[attr-defined]


@pytest.fixture
def signing_proxy(s3_bucket: S3Bucket) -> Iterator[WriteRefusingProxy]:
    """A pass-through proxy in front of the moto server: it records who signed each request."""
    proxy = WriteRefusingProxy(int(s3_bucket.endpoint.rsplit(":", 1)[1]))
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


def _signed_as(proxy: WriteRefusingProxy) -> set[str]:
    """access key id/region of every SigV4 ``Authorization`` header the proxy saw."""
    found = (re.search(r"Credential=([^/]+)/\d{8}/([^/]+)/s3/", header) for header in proxy.authorizations)
    return {f"{match[1]}/{match[2]}" for match in found if match}


def test_s3_credentials_and_region_come_from_farm_settings_with_no_aws_variable(
    s3_bucket: S3Bucket, signing_proxy: WriteRefusingProxy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("FARM_S3_ACCESS_KEY_ID", "farm-settings-key")
    monkeypatch.setenv("FARM_S3_SECRET_ACCESS_KEY", "farm-settings-secret")
    monkeypatch.setenv("FARM_S3_REGION", "eu-central-1")
    store = open_object_store(
        load_settings(object_store=f"s3://{s3_bucket.name}/p", s3_endpoint_url=signing_proxy.url)
    )
    digest = store.put(b"signed with the farm's own credentials")
    assert store.get(digest) == b"signed with the farm's own credentials"
    assert _signed_as(signing_proxy) == {"farm-settings-key/eu-central-1"}


def test_aws_variables_are_the_fallback_when_no_farm_s3_credentials_are_set(
    s3_bucket: S3Bucket, signing_proxy: WriteRefusingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FARM_S3_ACCESS_KEY_ID", "FARM_S3_SECRET_ACCESS_KEY", "FARM_S3_REGION"):
        monkeypatch.delenv(name, raising=False)
    store = open_object_store(
        load_settings(object_store=f"s3://{s3_bucket.name}", s3_endpoint_url=signing_proxy.url)
    )
    store.put(b"signed with boto3's chain")
    assert _signed_as(signing_proxy) == {"farm-test/us-east-1"}  # conftest_store's AWS_* variables


def test_the_s3_secret_access_key_is_never_shown_by_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARM_S3_ACCESS_KEY_ID", "farm-settings-key")
    monkeypatch.setenv("FARM_S3_SECRET_ACCESS_KEY", "never-shown-secret")
    settings = load_settings()
    assert "never-shown-secret" not in repr(settings) + str(settings)
    assert settings.s3_secret_access_key is not None
    assert settings.s3_secret_access_key.get_secret_value() == "never-shown-secret"


@pytest.mark.parametrize("location", ["s3://", "s3:///prefix"])
def test_bad_s3_location_names_the_setting(location: str) -> None:
    with pytest.raises(ValueError, match="FARM_OBJECT_STORE"):
        parse_s3_location(location)


def test_put_many_rewrites_a_torn_blob_a_crash_left_under_its_name_and_leaves_no_temporary_file(
    local_store: LocalObjectStore,
) -> None:
    # blobs beyond the small limit are files: written in place one by one, flushed once
    blobs = [name * (SMALL_BLOB_BYTES // len(name) + 1) for name in (b"first ", b"second ", b"third ")]
    digests = local_store.put_many(blobs)
    _overwrite_local(local_store, digests[1], b"")  # renamed into place, crashed before the flush
    assert local_store.put_many(blobs) == digests
    assert [local_store.get(digest) for digest in digests] == blobs
    assert sorted(p.name for p in (local_store.root / "sha256").iterdir()) == sorted(digests)


def test_s3_put_of_a_new_blob_is_one_conditional_put(s3_store: S3ObjectStore, s3_bucket: S3Bucket) -> None:
    calls: list[str] = []
    s3_bucket.client.meta.events.register("before-call.s3", lambda model, **_: calls.append(model.name))
    digest = s3_store.put(b"a new blob")
    assert calls == ["PutObject"]
    calls.clear()
    assert s3_store.put(b"a new blob") == digest  # the key is taken: read back, not written again
    assert calls == ["PutObject", "GetObject"]
    assert s3_store.get(digest) == b"a new blob"


def test_s3_put_on_a_server_without_conditional_writes_asks_first_and_still_writes_once(
    s3_bucket: S3Bucket, signing_proxy: WriteRefusingProxy
) -> None:
    signing_proxy.no_conditional_writes = True
    client = boto3.client("s3", endpoint_url=signing_proxy.url, region_name="us-east-1")
    store = S3ObjectStore(client, s3_bucket.name, "farm")
    digests = store.put_many([b"first", b"second"])
    assert [store.get(digest) for digest in digests] == [b"first", b"second"]
    signing_proxy.methods.clear()
    store.put(b"first")  # already there: a HEAD and a read, no write
    assert "PUT" not in signing_proxy.methods
    store.put(b"third")
    assert signing_proxy.methods.count("PUT") == 1 and store.get(sha256_hex(b"third")) == b"third"
