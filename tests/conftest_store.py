"""Fixtures for the storage, evidence and verification tests.

- Databases: every store test runs on SQLite and on a real PostgreSQL (``FARM_TEST_POSTGRES_URL``,
  default ``postgresql+psycopg://postgres@127.0.0.1:5432/test``). The session creates its own
  databases ``farm_test_<random>_*`` there and drops them at the end; each test starts with
  empty farm tables.
- S3: a moto server is started on a free loopback port for the session; each test gets a fresh bucket.
- Keys are generated per test; nothing here touches ``./.farm``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import pytest
import typer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import Engine, create_engine, event, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from typer.testing import CliRunner

from farm.evidence.keys import Signer, TrustedSigners, generate_key_pair, load_signer, signer_from_private_key
from farm.evidence.provenance import RenderInputs, RenderProvenance, action_key
from farm.evidence.signing import SignedOutput, rendered, sign_batch, sign_output
from farm.identity.canonical import canonical_json, digest_of, sha256_hex
from farm.identity.keys import batch_key
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import (
    CatalogSnapshot,
    EvidenceRecord,
    FleetRun,
    JobState,
    RenderJob,
    RenderTarget,
    new_id,
    utcnow,
)
from farm.store.objects import LocalObjectStore, ObjectStore, S3ObjectStore
from farm.store.outputs import put_signed, record_outputs
from farm.store.runs import TargetResult, claim_job, finish_job

POSTGRES_ADMIN_URL = os.environ.get(
    "FARM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
DATABASES = ["sqlite", "postgresql"]
CORE_VERSION = "test-core-1"


# ---------------------------------------------------------------------------------------------
# Databases
# ---------------------------------------------------------------------------------------------


@dataclass
class PostgresServer:
    admin: Engine
    prefix: str
    created: list[str] = field(default_factory=list)

    def url_for(self, name: str) -> str:
        return make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)

    def create_database(self, suffix: str, template: str | None = None) -> str:
        name = f"{self.prefix}_{suffix}"
        clause = f" TEMPLATE {template}" if template else ""
        with self.admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        self.created.append(name)
        return name

    def drop_all(self) -> None:
        with self.admin.connect() as connection:
            for name in reversed(self.created):
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as error:  # a missing server is a failure, never a skip
        raise RuntimeError(
            f"PostgreSQL for the store tests is not reachable at {POSTGRES_ADMIN_URL}: {error}"
        ) from None
    server = PostgresServer(admin, f"farm_test_{uuid.uuid4().hex[:10]}")
    yield server
    server.drop_all()
    admin.dispose()


@dataclass
class DatabaseFactory:
    """Makes databases for tests.

    ``migrated`` gives a database at head with every farm table empty: a copied template file on
    SQLite; on PostgreSQL one session-wide database whose tables are truncated for each test
    (creating and dropping a PostgreSQL database per test costs seconds each). ``empty`` gives a
    brand-new database with no tables, for the migration tests.
    """

    postgres: PostgresServer
    root: Path
    sqlite_template: Path | None = None
    postgres_shared: Engine | None = None

    def empty(self, kind: str) -> str:
        if kind == "sqlite":
            return f"sqlite:///{self.root / f'{uuid.uuid4().hex}.db'}"
        name = self.postgres.create_database(uuid.uuid4().hex[:12])
        return self.postgres.url_for(name)

    def migrated(self, kind: str) -> str:
        if kind == "sqlite":
            return self._sqlite_copy()
        if self.postgres_shared is None:
            name = self.postgres.create_database("shared")
            # Test data need not survive a power cut; waiting for WAL flushes is most of the time.
            with self.postgres.admin.connect() as connection:
                connection.execute(text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
            url = self.postgres.url_for(name)
            migrate.upgrade(url)
            self.postgres_shared = create_engine(url)
        self._empty_postgres_tables(self.postgres_shared)
        return self.postgres_shared.url.render_as_string(hide_password=False)

    def _sqlite_copy(self) -> str:
        if self.sqlite_template is None:
            self.sqlite_template = self.root / "template.db"
            migrate.upgrade(f"sqlite:///{self.sqlite_template}")
        copy = self.root / f"{uuid.uuid4().hex}.db"
        shutil.copyfile(self.sqlite_template, copy)
        return f"sqlite:///{copy}"

    @staticmethod
    def _empty_postgres_tables(engine: Engine) -> None:
        # DELETE is far cheaper than TRUNCATE for a dozen tiny tables. The replica role switches
        # off triggers and FK checks for this one transaction only, so the append-only guard of
        # evidence_records stays in force for the tests themselves.
        with engine.connect() as connection, connection.begin():
            tables = connection.scalars(
                text(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
                )
            ).all()
            connection.execute(text("SET LOCAL session_replication_role = replica"))
            for table in tables:
                connection.execute(text(f"DELETE FROM {table}"))

    def close(self) -> None:
        if self.postgres_shared is not None:
            self.postgres_shared.dispose()


@pytest.fixture(scope="session")
def databases(
    postgres_server: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DatabaseFactory]:
    factory = DatabaseFactory(postgres_server, tmp_path_factory.mktemp("databases"))
    yield factory
    factory.close()


@pytest.fixture(params=DATABASES)
def database_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def database_url(databases: DatabaseFactory, database_kind: str) -> str:
    """A fresh database migrated to head, on SQLite or PostgreSQL."""
    return databases.migrated(database_kind)


@pytest.fixture(params=DATABASES)
def empty_url(request: pytest.FixtureRequest, databases: DatabaseFactory) -> str:
    """A fresh database with no schema yet (a migration test migrates it), on SQLite or
    PostgreSQL."""
    return databases.empty(request.param)


@pytest.fixture
def empty_engine(empty_url: str) -> Iterator[Engine]:
    engine = create_farm_engine(empty_url)
    yield engine
    engine.dispose()


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = create_farm_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def sessions(engine: Engine) -> sessionmaker[Session]:
    return make_session_factory(engine)


SQLITE_DBCONFIG_DEFENSIVE = 1010


def _defensive(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    """Switch SQLite's defensive mode on for a new connection, as some builds have it by default:
    it refuses writes to ``sqlite_master``. Python 3.11's sqlite3 has no call for it, so the
    C library's is called on the connection's handle (CPython's ``pysqlite_Connection`` holds it
    right after the object header)."""
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
    handle = ctypes.c_void_p.from_address(id(dbapi_connection) + object.__basicsize__).value
    status = library.sqlite3_db_config(
        ctypes.c_void_p(handle), ctypes.c_int(SQLITE_DBCONFIG_DEFENSIVE), ctypes.c_int(1), ctypes.c_void_p(0)
    )
    assert status == 0


@contextmanager
def sqlite_defensive_mode() -> Iterator[None]:
    """Every SQLite connection opened meanwhile is in defensive mode (``_defensive``)."""
    event.listen(Engine, "connect", _defensive)
    try:
        yield
    finally:
        event.remove(Engine, "connect", _defensive)


def table_rows(engine: Engine, tables: Iterable[str]) -> dict[str, list[tuple[object, ...]]]:
    """Every row of each table, in a stable order: what a migration must keep."""
    with engine.connect() as connection:
        return {
            table: sorted(
                (tuple(row) for row in connection.execute(text(f"SELECT * FROM {table}"))), key=repr
            )
            for table in tables
        }


def assert_sqlite_intact(engine: Engine) -> None:
    """SQLite finds its file consistent after a schema edit in place (nothing on PostgreSQL)."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as connection:
            assert connection.scalar(text("PRAGMA integrity_check")) == "ok"


def sqlite_tables_sql(engine: Engine, tables: Iterable[str]) -> dict[str, str] | None:
    """Each table's ``CREATE TABLE`` text as SQLite keeps it (None on PostgreSQL)."""
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        return {
            table: connection.scalar(
                text("SELECT sql FROM sqlite_master WHERE name = :name"), {"name": table}
            )
            for table in tables
        }


def refused_downgrade(storage_cli: typer.Typer, url: str, home: Path, revision: str) -> str:
    """``farm db downgrade revision``, which must fail with one ``Error:`` line and no traceback;
    its output."""
    env = {"FARM_DATABASE_URL": url, "FARM_HOME": str(home)}
    result = CliRunner().invoke(storage_cli, ["db", "downgrade", revision], env=env)
    assert result.exit_code == 1
    assert result.output.count("Error: ") == 1 and "Traceback" not in result.output
    return result.output


# ---------------------------------------------------------------------------------------------
# Object storage
# ---------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with status {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"moto server did not listen on 127.0.0.1:{port}")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-speaking server (moto) on loopback, with test credentials in the environment."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    patch = pytest.MonkeyPatch()
    patch.setenv("AWS_ACCESS_KEY_ID", "farm-test")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "farm-test-secret")
    patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        patch.undo()
        process.terminate()
        process.wait()


@dataclass
class S3Bucket:
    endpoint: str
    name: str
    client: object


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> S3Bucket:
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    name = f"farm-{uuid.uuid4().hex[:16]}"
    client.create_bucket(Bucket=name)
    return S3Bucket(s3_endpoint, name, client)


@pytest.fixture
def local_store(tmp_path: Path) -> LocalObjectStore:
    return LocalObjectStore(tmp_path / "objects")


@pytest.fixture
def s3_store(s3_bucket: S3Bucket) -> S3ObjectStore:
    return S3ObjectStore(s3_bucket.client, s3_bucket.name, "farm")


@pytest.fixture(params=["local", "s3"])
def object_store(request: pytest.FixtureRequest) -> ObjectStore:
    return request.getfixturevalue(f"{request.param}_store")


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def signer() -> Signer:
    return signer_from_private_key(Ed25519PrivateKey.generate())


@pytest.fixture
def trusted(signer: Signer) -> TrustedSigners:
    return TrustedSigners({signer.keyid: signer.public_key})


# ---------------------------------------------------------------------------------------------
# A small fleet: snapshots, runs, jobs and stored outputs
# ---------------------------------------------------------------------------------------------


REQUEST_BLOBS: dict[str, bytes] = {}  # request digest → the blob it names, for make_inputs' requests


def make_inputs(application: str = "web", profile: str = "prod", selection: str = "") -> RenderInputs:
    request = canonical_json({"request": [application, profile, selection]})
    REQUEST_BLOBS[sha256_hex(request)] = request
    return RenderInputs(
        core_version=CORE_VERSION,
        request_digest=sha256_hex(request),
        application_digest=digest_of({"application": application}),
        values_digest=digest_of({"values": application}),
        cluster_profile_digest=digest_of({"clusterProfile": profile}),
        selection=selection,
    )


def overwrite_envelope(sessions: sessionmaker[Session], evidence_id: int, data: bytes | None) -> None:
    """What an attacker with write access to the database does to an evidence record: get past
    the append-only trigger and replace the envelope the row holds."""
    with sessions.begin() as session:
        postgres = session.get_bind().dialect.name == "postgresql"
        if postgres:
            session.execute(text("ALTER TABLE evidence_records DISABLE TRIGGER USER"))
        else:
            session.execute(text("DROP TRIGGER IF EXISTS evidence_records_append_only_update"))
        session.execute(
            text("UPDATE evidence_records SET envelope = :data WHERE id = :id"),
            {"data": data, "id": evidence_id},
        )
        if postgres:
            session.execute(text("ALTER TABLE evidence_records ENABLE TRIGGER USER"))


def tamper_evidence(sessions: sessionmaker[Session], statement: str, params: dict[str, object]) -> None:
    """Run ``statement`` past the append-only triggers of ``evidence_records`` and
    ``evidence_envelopes``, as an attacker with write access to the database would."""
    with sessions.begin() as session:
        postgres = session.get_bind().dialect.name == "postgresql"
        tables = ("evidence_records", "evidence_envelopes")
        for table in tables:
            if postgres:
                session.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            else:
                for operation in ("update", "delete"):
                    session.execute(text(f"DROP TRIGGER IF EXISTS {table}_append_only_{operation}"))
        session.execute(text(statement), params)
        if postgres:
            for table in tables:
                session.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))


@dataclass(frozen=True)
class OutputRecord:
    """What one stored render left behind, for the tests to look at."""

    output_digest: str
    envelope_digest: str
    action_key: str
    evidence_id: int


@dataclass
class Fleet:
    """Builds rows the way the scheduler and workers do, through the public store functions."""

    sessions: sessionmaker[Session]
    objects: ObjectStore
    signer: Signer
    snapshot: str = field(default_factory=lambda: sha256_hex(uuid.uuid4().bytes))

    def __post_init__(self) -> None:
        with self.sessions.begin() as session:
            session.add(CatalogSnapshot(digest=self.snapshot, source="tests"))

    def new_run(self) -> str:
        with self.sessions.begin() as session:
            run = FleetRun(snapshot_digest=self.snapshot, core_version=CORE_VERSION, state="running")
            session.add(run)
            session.flush()
            return run.id

    def new_job(self, run_id: str, *targets: tuple[RenderInputs, str, str]) -> tuple[str, list[str]]:
        """A queued job of (inputs, application, profile) targets; its id and its target ids."""
        job_id, target_ids = new_id(), [new_id() for _ in targets]
        keys = [action_key(inputs) for inputs, _, _ in targets]
        for inputs, _, _ in targets:  # the blob each request digest names
            self.objects.put(REQUEST_BLOBS[inputs.request_digest])
        with self.sessions.begin() as session:
            session.add(
                RenderJob(
                    id=job_id,
                    run_id=run_id,
                    application=targets[0][1],
                    batch_key=batch_key(keys),
                    target_count=len(targets),
                    state=JobState.QUEUED.value,
                    queued_at=utcnow(),
                )
            )
            session.flush()
            for target_id, (inputs, application, profile), key in zip(target_ids, targets, keys, strict=True):
                session.add(
                    RenderTarget(
                        id=target_id,
                        run_id=run_id,
                        job_id=job_id,
                        application=application,
                        cluster_profile=profile,
                        selection=inputs.selection,
                        request_digest=inputs.request_digest,
                        action_key=key,
                        state=JobState.QUEUED.value,
                    )
                )
        return job_id, target_ids

    def provenance(
        self, target_id: str, inputs: RenderInputs, application: str = "web", profile: str = "prod"
    ) -> RenderProvenance:
        return RenderProvenance(inputs, application, profile, self.snapshot, target_id)

    def sign(
        self, manifests: bytes, target_id: str, inputs: RenderInputs, application: str, profile: str
    ) -> SignedOutput:
        return sign_output(self.signer, manifests, self.provenance(target_id, inputs, application, profile))

    def render(
        self,
        manifests: bytes,
        *,
        application: str = "web",
        profile: str = "prod",
        run_id: str | None = None,
        signer: Signer | None = None,
    ) -> tuple[str, str, OutputRecord]:
        """Plan, claim, store and finish a one-target job; returns (run id, target id, record)."""
        run_id = run_id or self.new_run()
        inputs = make_inputs(application, profile)
        job_id, [target_id] = self.new_job(run_id, (inputs, application, profile))
        signer = signer or self.signer
        signed = sign_output(signer, manifests, self.provenance(target_id, inputs, application, profile))
        put_signed(self.objects, [signed])
        with self.sessions.begin() as session:
            assert claim_job(session, job_id, worker="worker-1") is not None
            assert record_outputs(session, signer, [signed]) == {}
            result = TargetResult(target_id, JobState.SUCCEEDED, output_digest=signed.output_digest)
            assert finish_job(session, job_id, worker="worker-1", results=[result])
            evidence_id = session.scalar(
                select(EvidenceRecord.id).where(EvidenceRecord.envelope_digest == signed.envelope_digest)
            )
        record = OutputRecord(signed.output_digest, signed.envelope_digest, signed.action_key, evidence_id)
        return run_id, target_id, record

    def render_batch(
        self, application: str, outputs: dict[str, bytes], *, run_id: str | None = None
    ) -> tuple[str, list[str], list[SignedOutput]]:
        """Plan, claim, sign as one batch statement, store and finish a job of ``application``
        with one target per profile of ``outputs`` (profile → manifests); returns (run id,
        target ids, signed outputs) in the job's order."""
        run_id = run_id or self.new_run()
        targets = [(make_inputs(application, profile), application, profile) for profile in outputs]
        job_id, target_ids = self.new_job(run_id, *targets)
        signed = sign_batch(
            self.signer,
            job_id,
            [
                rendered(outputs[profile], self.provenance(target_id, inputs, application, profile))
                for target_id, (inputs, _, profile) in zip(target_ids, targets, strict=True)
            ],
        )
        put_signed(self.objects, signed)
        with self.sessions.begin() as session:
            assert claim_job(session, job_id, worker="worker-1") is not None
            assert record_outputs(session, self.signer, signed) == {}
            results = [
                TargetResult(target_id, JobState.SUCCEEDED, output_digest=output.output_digest)
                for target_id, output in zip(target_ids, signed, strict=True)
            ]
            assert finish_job(session, job_id, worker="worker-1", results=results)
        return run_id, target_ids, signed

    def envelope(self, evidence_id: int) -> bytes:
        """The envelope bytes an evidence record holds in its row."""
        with self.sessions() as session:
            envelope = session.scalar(select(EvidenceRecord.envelope).where(EvidenceRecord.id == evidence_id))
        assert envelope is not None, f"evidence record {evidence_id} holds no envelope"
        return envelope

    def overwrite_envelope(self, evidence_id: int, data: bytes | None) -> None:
        overwrite_envelope(self.sessions, evidence_id, data)


@pytest.fixture
def fleet(sessions: sessionmaker[Session], local_store: LocalObjectStore, signer: Signer) -> Fleet:
    return Fleet(sessions, local_store, signer)


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def storage_cli() -> typer.Typer:
    """A ``farm`` app with only the storage commands, so these tests do not depend on the others."""
    from farm.commands import db, gc, keys, verify

    app = typer.Typer(pretty_exceptions_enable=False)
    for module in (db, keys, verify, gc):
        module.register(app)
    return app


@pytest.fixture
def key_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "keys"
    generate_key_pair(folder)
    return folder


@pytest.fixture
def farm_env(tmp_path: Path, database_url: str, key_dir: Path) -> dict[str, str]:
    """FARM_* variables for a CLI run against the test database and a local object folder."""
    trusted_file = tmp_path / "trusted_signers"
    trusted_file.write_text((key_dir / "signing.pub").read_text())
    return {
        "FARM_HOME": str(tmp_path / ".farm"),
        "FARM_DATABASE_URL": database_url,
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_SIGNING_KEY": str(key_dir / "signing.key"),
        "FARM_TRUSTED_SIGNERS": str(trusted_file),
    }


@pytest.fixture
def cli_fleet(farm_env: dict[str, str], sessions: sessionmaker[Session]) -> Fleet:
    """A fleet writing where ``farm_env`` points, signed by the trusted key."""
    objects = LocalObjectStore(Path(farm_env["FARM_OBJECT_STORE"]))
    return Fleet(sessions, objects, load_signer(Path(farm_env["FARM_SIGNING_KEY"])))
