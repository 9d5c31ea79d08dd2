"""The farm's tables as SQLAlchemy 2 typed declarative models.

Conventions:

- Digests are sha256 as 64 lowercase hex characters (``String(64)``), never with a ``sha256:``
  prefix. A ``*_digest`` column that names a blob points at ``sha256/<hex>`` in object storage.
- Ids of runs, jobs and targets are 32-character UUIDv7 hex strings (RFC 9562: a millisecond
  timestamp, then random bits) made in Python, so they can be handed to a queue before or without
  a database round trip and look the same on SQLite and PostgreSQL. Time-ordered, so a run's rows
  go to the end of each id index instead of one random page per row: with a dozen 100,000-target
  runs stored, a no-change re-run took 10.5 s instead of 12.2 s with uuid4 ids.
- "No selection" (an unprofiled target) is the empty string, not NULL, so it takes part in
  unique constraints the same way on both databases.
- Every constraint and index has an explicit name (``NAMING_CONVENTION``) so the hand-written
  migrations can create and drop them by name.
- The schema is created only by migrations (``migrations/``); this module is never imported there.
  ``tests/test_migrations.py`` checks that the two agree.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    and_,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from uuid6 import uuid7

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

Digest = String(64)


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A moment stored in UTC and read back as an aware UTC datetime, on both databases.

    SQLite keeps no offset (SQLAlchemy writes the wall-clock digits and reads a naive datetime
    back) and PostgreSQL answers in the session's time zone: each moment is turned to UTC before
    it is written, and every moment read carries ``+00:00``, so the CLI, the API and the pages
    show one offset whatever the database."""

    impl = DateTime(timezone=True)
    cache_ok = True

    @property
    def python_type(self) -> type:
        return datetime  # a TypeDecorator says ``object``: the API's cursors decode by this type

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def new_id() -> str:
    return uuid7().hex


_COUNTER_BITS = 32


def new_ids(count: int) -> list[str]:
    """``count`` UUIDv7 ids in ascending order, as ``new_id`` makes them but at a fraction of the
    cost (a plan makes one per target): one ``uuid7`` gives the millisecond and the random bits,
    and the low 32 bits of its random part count (RFC 9562's fixed-length counter, section 6.2)."""
    if count > 1 << _COUNTER_BITS:
        raise ValueError(f"count: at most {1 << _COUNTER_BITS} ids at once, got {count}")
    base = uuid7().int >> _COUNTER_BITS << _COUNTER_BITS
    return [f"{base | counter:032x}" for counter in range(count)]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class JobState(enum.StrEnum):
    PLANNED = "planned"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CACHED = "cached"


class RunKind(enum.StrEnum):
    """What a run is for: a fleet-wide render, the renders of one qualification, an audit."""

    FLEET = "fleet"
    QUALIFICATION = "qualification"
    AUDIT = "audit"


class Trigger(enum.StrEnum):
    """Who started a run: a command, the API, or a schedule (beat, a Celery task)."""

    CLI = "cli"
    API = "api"
    SCHEDULE = "schedule"


class RunState(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    COMPLETED_WITH_FAILURES = "completed_with_failures"
    ABORTED = "aborted"


def _in_values(column: str, values: type[enum.StrEnum]) -> str:
    """``column`` is one of ``values``, spelled as comparisons joined by OR: SQLite builds the
    list of an ``IN (…)`` anew for each row a statement writes (revision 0027: over a quarter of
    a no-change run's insert of its target rows)."""
    return " OR ".join(f"{column} = {v.value!r}" for v in values)


# ---------------------------------------------------------------------------------------------
# Catalog snapshots
# ---------------------------------------------------------------------------------------------


class CatalogSnapshot(Base):
    """An immutable catalog version, keyed by the digest of its content."""

    __tablename__ = "catalog_snapshots"

    digest: Mapped[str] = mapped_column(Digest, primary_key=True)
    parent_digest: Mapped[str | None] = mapped_column(ForeignKey("catalog_snapshots.digest"))
    source: Mapped[str | None] = mapped_column(Text)
    source_commit: Mapped[str | None] = mapped_column(String(64))
    blob_digest: Mapped[str | None] = mapped_column(Digest)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class Application(Base):
    """One Application as it is in one snapshot."""

    __tablename__ = "applications"
    __table_args__ = (UniqueConstraint("snapshot_digest", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    snapshot_digest: Mapped[str] = mapped_column(ForeignKey("catalog_snapshots.digest"), index=True)
    name: Mapped[str] = mapped_column(String(253))
    digest: Mapped[str] = mapped_column(Digest)
    values_digest: Mapped[str | None] = mapped_column(Digest)
    blob_digest: Mapped[str | None] = mapped_column(Digest)


class ClusterProfile(Base):
    """One ClusterProfile as it is in one snapshot, with its catalog-load verdict."""

    __tablename__ = "cluster_profiles"
    __table_args__ = (UniqueConstraint("snapshot_digest", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    snapshot_digest: Mapped[str] = mapped_column(ForeignKey("catalog_snapshots.digest"), index=True)
    name: Mapped[str] = mapped_column(String(253))
    digest: Mapped[str] = mapped_column(Digest)
    blob_digest: Mapped[str | None] = mapped_column(Digest)
    valid: Mapped[bool] = mapped_column(Boolean, default=True)
    error_code: Mapped[str | None] = mapped_column(String(128))
    error_message: Mapped[str | None] = mapped_column(Text)


# ---------------------------------------------------------------------------------------------
# Fleet runs, render jobs, outputs and the action cache
# ---------------------------------------------------------------------------------------------


class FleetRun(Base):
    """One fleet-wide render of a snapshot. Progress is counted from its jobs in SQL."""

    __tablename__ = "fleet_runs"
    __table_args__ = (
        CheckConstraint(_in_values("state", RunState), name="state"),
        Index("ix_fleet_runs_fleet_kind_created_at", "fleet", "kind", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    snapshot_digest: Mapped[str] = mapped_column(ForeignKey("catalog_snapshots.digest"), index=True)
    kind: Mapped[str] = mapped_column(String(16), default=RunKind.FLEET.value, server_default="fleet")
    fleet: Mapped[str | None] = mapped_column(String(255))  # the catalog's fleet name
    trigger: Mapped[str] = mapped_column(String(32), default=Trigger.CLI.value)
    core_version: Mapped[str] = mapped_column(String(64))
    selection_policy: Mapped[str] = mapped_column(String(32), default="default")
    state: Mapped[str] = mapped_column(String(32), default=RunState.PENDING.value)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    # HOST/BOOT/PID/START of the process executing it on a blocking executor (farm.fleet.owners);
    # NULL when its jobs went to Celery (revision 0013)
    owner: Mapped[str | None] = mapped_column(String(255))


class RenderOutput(Base):
    """Rendered manifests, keyed by the digest of their bytes (the blob ``sha256/<digest>``)."""

    __tablename__ = "render_outputs"

    digest: Mapped[str] = mapped_column(Digest, primary_key=True)
    size_bytes: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class Signer(Base):
    """A signing key the farm has seen. ``trusted`` mirrors the trusted-signers file for queries."""

    __tablename__ = "signers"

    keyid: Mapped[str] = mapped_column(Digest, primary_key=True)
    public_key_pem: Mapped[str] = mapped_column(Text)
    trusted: Mapped[bool] = mapped_column(Boolean, default=False)
    first_seen_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class RenderJob(Base):
    """One application and a batch of its targets in one run: the unit a worker claims.

    Claimed with a conditional UPDATE (``repository.claim_job``); ``batch_key`` is the digest of
    its targets' action keys, which the queue message carries and the claim compares. A job goes
    planned → queued → running → succeeded (its targets' results recorded, failures included).
    ``(run_id, state)`` is indexed so "is any job of this run still open?" is an index probe.
    """

    __tablename__ = "render_jobs"
    __table_args__ = (
        CheckConstraint(_in_values("state", JobState), name="state"),
        Index("ix_render_jobs_run_id_state", "run_id", "state"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    run_id: Mapped[str] = mapped_column(ForeignKey("fleet_runs.id"))
    application: Mapped[str] = mapped_column(String(253))
    batch_key: Mapped[str] = mapped_column(Digest)
    target_count: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default=JobState.PLANNED.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(253))
    error_code: Mapped[str | None] = mapped_column(String(128))
    error_message: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    queued_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


# the condition of render_targets' partial index on output digests; a query meant to use it names
# it as this literal SQL (SQLite uses a partial index only for a literal term, not a parameter)
RENDERED_TARGET = "state = 'succeeded'"
# the condition of evidence_records' unique index on envelope digests: the rows that hold their
# own envelope, not a subject of a batch statement
OWN_ENVELOPE = "batch_envelope IS NULL"


class RenderTarget(Base):
    """The result of one target (application, ClusterProfile, selection) in one run.

    ``state``: ``queued`` while its job has not recorded it, then ``succeeded`` or ``failed``
    (rendered in this run) or ``cached`` (served from the action cache: with an output, or with
    the error code and message of a cached deterministic failure). A cached target has no job.

    This table was ``render_jobs`` when a job was one target (revision 0004 renamed it), so its
    constraints keep the names they were created with.
    """

    __tablename__ = "render_targets"
    __table_args__ = (
        UniqueConstraint(
            "run_id",
            "application",
            "cluster_profile",
            "selection",
            name="uq_render_jobs_run_id_application_cluster_profile_selection",
        ),
        # no (application, cluster_profile) index: a target's rows across runs are read run by run,
        # through this unique index (revision 0022: each run wrote a random page of it)
        CheckConstraint(_in_values("state", JobState), name="state"),
        # with the error code: a run's counts, failures and completion read this index alone
        # (a cached failure is a cached row with a code; revision 0024)
        Index("ix_render_targets_run_id_state_error", "run_id", "state", "error_code"),
        # a cached target has no job: only rows with one are indexed (a no-change run adds none)
        Index(
            "ix_render_targets_job_id",
            "job_id",
            sqlite_where=text("job_id IS NOT NULL"),
            postgresql_where=text("job_id IS NOT NULL"),
        ),
        # the rows that rendered an output, for ``farm verify`` (revision 0023): a cache hit adds no
        # entry, so a no-change run writes none; verify binds cache hits run by run
        Index(
            "ix_render_targets_rendered_output",
            "output_digest",
            sqlite_where=text(RENDERED_TARGET),
            postgresql_where=text(RENDERED_TARGET),
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    # run_id and output_digest name a fleet_runs and a render_outputs row without a foreign key,
    # as do the evidence and cache rows of a rendered target (revision 0025: PostgreSQL checked
    # each per row, most of a no-change run's insert). The farm writes a run's row with its first
    # targets and deletes none while a target names it (farm.store.retention), and deletes no
    # output, record or signer; ``farm verify`` checks every such reference, as it does job_id
    run_id: Mapped[str] = mapped_column(String(32))
    job_id: Mapped[str | None] = mapped_column(String(32))
    application: Mapped[str] = mapped_column(String(253))
    cluster_profile: Mapped[str] = mapped_column(String(253))
    selection: Mapped[str] = mapped_column(String(253), default="")
    request_digest: Mapped[str | None] = mapped_column(Digest)
    # the request pack blob holding the request's descriptor; NULL on rows written before packs,
    # whose request is a blob of its own (``request_digest``)
    request_pack: Mapped[str | None] = mapped_column(Digest)
    # not indexed: no statement looks a target up by its action key, nor by its error code alone
    action_key: Mapped[str] = mapped_column(Digest)
    state: Mapped[str] = mapped_column(String(16), default=JobState.QUEUED.value)
    error_code: Mapped[str | None] = mapped_column(String(128))
    error_message: Mapped[str | None] = mapped_column(Text)
    output_digest: Mapped[str | None] = mapped_column(Digest)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


class FailedAction(Base):
    """action key → the deterministic core error its render raised: failures are cached too.

    Only errors of the core (bad input) go here; internal and infrastructure errors never do. The
    row is served only with its signed statement (``envelope``, whose sha256 is
    ``envelope_digest``; ``farm.evidence.failure``) verifying against the trusted signers.
    """

    __tablename__ = "failed_actions"

    action_key: Mapped[str] = mapped_column(Digest, primary_key=True)
    error_code: Mapped[str] = mapped_column(String(128))
    error_message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    envelope_digest: Mapped[str | None] = mapped_column(Digest)
    signer_keyid: Mapped[str | None] = mapped_column(String(64))
    envelope: Mapped[bytes | None] = mapped_column(LargeBinary)


class EvidenceEnvelope(Base):
    """The DSSE envelope of a batch statement, stored once for the evidence records of its
    subjects (revision 0018). Append-only: triggers refuse UPDATE/DELETE."""

    __tablename__ = "evidence_envelopes"

    digest: Mapped[str] = mapped_column(Digest, primary_key=True)
    envelope: Mapped[bytes] = mapped_column(LargeBinary)
    signer_keyid: Mapped[str] = mapped_column(ForeignKey("signers.keyid"))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class EvidenceRecord(Base):
    """A signed statement about a render output, one row per output it vouches for.

    A row of a batch (revision 0018) names the batch envelope (``batch_envelope``, a row of
    ``evidence_envelopes``) and the position of its subject in that statement (``subject_index``);
    its ``envelope_digest`` is then the sha256 of ``"<batch envelope>/<index>"``
    (``farm.evidence.batch.subject_reference``). A row written before holds its own envelope
    (``envelope``, whose sha256 is ``envelope_digest``), or before revision 0010 names a blob.
    Append-only: triggers refuse UPDATE/DELETE."""

    __tablename__ = "evidence_records"
    __table_args__ = (
        # a batch row is one subject of its batch's statement (revision 0026): this index also
        # finds a batch's rows. Its entries follow the batch, where a unique envelope_digest (a
        # random sha256 per row) wrote a page of SQLite's log per rendered output
        Index(
            "uq_evidence_records_batch_envelope_subject_index", "batch_envelope", "subject_index", unique=True
        ),
        # a row holding its own envelope (before revision 0018) is unique by that envelope's digest
        Index(
            "uq_evidence_records_own_envelope_digest",
            "envelope_digest",
            unique=True,
            sqlite_where=text(OWN_ENVELOPE),
            postgresql_where=text(OWN_ENVELOPE),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    envelope_digest: Mapped[str] = mapped_column(Digest)
    statement_digest: Mapped[str] = mapped_column(Digest)
    subject_name: Mapped[str] = mapped_column(Text)
    subject_digest: Mapped[str] = mapped_column(Digest, index=True)
    predicate_type: Mapped[str] = mapped_column(String(255))
    # signer_keyid and target_id name a signers and a render_targets row without a foreign key
    # (revision 0025; see RenderTarget); neither is indexed (revision 0021)
    signer_keyid: Mapped[str] = mapped_column(Digest)
    action_key: Mapped[str | None] = mapped_column(Digest)  # not indexed: revision 0021
    target_id: Mapped[str | None] = mapped_column(String(32))
    cluster_profile: Mapped[str | None] = mapped_column(String(253))
    selection: Mapped[str | None] = mapped_column(String(253))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    envelope: Mapped[bytes | None] = mapped_column(LargeBinary)
    batch_envelope: Mapped[str | None] = mapped_column(Digest)
    subject_index: Mapped[int | None] = mapped_column(Integer)


class ActionCacheEntry(Base):
    """action key → output: the whole cache look-up is one primary-key read.

    Kept apart from ``render_outputs`` because two action keys can give the same bytes.
    """

    __tablename__ = "action_cache"

    action_key: Mapped[str] = mapped_column(Digest, primary_key=True)
    # an output and an evidence record, named without a foreign key (revision 0025; see RenderTarget)
    output_digest: Mapped[str] = mapped_column(Digest, index=True)
    evidence_id: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


# ---------------------------------------------------------------------------------------------
# Configuration profiles and qualification (profiles-evidence.md §3; revision 0002)
# ---------------------------------------------------------------------------------------------


class ProfileDeclaration(Base):
    """The configuration profile declared on one ClusterProfile version (at most one)."""

    __tablename__ = "profile_declarations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cluster_profile_id: Mapped[int] = mapped_column(ForeignKey("cluster_profiles.id"), unique=True)
    name: Mapped[str] = mapped_column(String(63))
    description: Mapped[str | None] = mapped_column(Text)
    default_value: Mapped[str] = mapped_column(String(63))
    owned_paths_json: Mapped[str] = mapped_column(Text)
    surface_digest: Mapped[str] = mapped_column(Digest)


class ProfileValue(Base):
    """One declared value; its lowercased name is unique per declaration."""

    __tablename__ = "profile_values"
    __table_args__ = (UniqueConstraint("declaration_id", "name_lower"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    declaration_id: Mapped[int] = mapped_column(ForeignKey("profile_declarations.id"), index=True)
    name: Mapped[str] = mapped_column(String(63))
    name_lower: Mapped[str] = mapped_column(String(63))
    fragment_json: Mapped[str] = mapped_column(Text)
    fragment_digest: Mapped[str] = mapped_column(Digest)
    resolved_digest: Mapped[str | None] = mapped_column(Digest)


class QualificationState(Base):
    """Materialised, derived state of one (ClusterProfile, profile value) at one snapshot.

    ``profile_name``/``value`` are empty for an unprofiled ClusterProfile. It can always be
    recomputed from the evidence records and must agree with that recomputation.
    """

    __tablename__ = "qualification_states"
    __table_args__ = (
        UniqueConstraint(
            "snapshot_digest",
            "cluster_profile",
            "profile_name",
            "value",
            name="uq_qualification_states_subject",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    snapshot_digest: Mapped[str] = mapped_column(ForeignKey("catalog_snapshots.digest"), index=True)
    cluster_profile: Mapped[str] = mapped_column(String(253))
    profile_name: Mapped[str] = mapped_column(String(63), default="")
    value: Mapped[str] = mapped_column(String(63), default="")
    state: Mapped[str] = mapped_column(String(32))
    reasons_json: Mapped[str] = mapped_column(Text, default="[]")
    current_evidence_id: Mapped[int | None] = mapped_column(
        ForeignKey("evidence_records.id", name="fk_qualification_states_current_evidence")
    )
    last_passing_evidence_id: Mapped[int | None] = mapped_column(
        ForeignKey("evidence_records.id", name="fk_qualification_states_last_passing_evidence")
    )
    since: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class AuditRecord(Base):
    """A signed audit record of ``farm audit``: the envelope blob, the run it audited, its counts."""

    __tablename__ = "audit_records"
    __table_args__ = (UniqueConstraint("envelope_digest", name="uq_audit_records_envelope_digest"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    envelope_digest: Mapped[str] = mapped_column(Digest)
    run_id: Mapped[str] = mapped_column(
        ForeignKey("fleet_runs.id", name="fk_audit_records_run_id_fleet_runs"), index=True
    )
    signer_keyid: Mapped[str] = mapped_column(String(64))
    seed: Mapped[int | None] = mapped_column(Integer)
    audited: Mapped[int] = mapped_column(Integer)
    nondeterministic: Mapped[int] = mapped_column(Integer)
    drifted: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class QualificationSubject(Base):
    """One qualification subject (ClusterProfile, selection ``name=value`` or ``""``) and its state.

    ``state``/``reason``/``since``/``current_evidence_id`` are a cache of the derivation in
    ``farm/qualification/states.py``; every change appends a ``QualificationEvent``.
    ``claimed_until`` is the beat lock: a conditional UPDATE claims the subject for one enqueue.
    """

    __tablename__ = "qualification_subjects"
    __table_args__ = (UniqueConstraint("cluster_profile", "selection", name="uq_qualification_subjects"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cluster_profile: Mapped[str] = mapped_column(String(253))
    selection: Mapped[str] = mapped_column(String(127), default="")
    state: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(64), default="")
    since: Mapped[datetime] = mapped_column(UtcDateTime)
    current_evidence_id: Mapped[int | None] = mapped_column(Integer)
    claimed_until: Mapped[datetime | None] = mapped_column(UtcDateTime)


class QualificationEvidence(Base):
    """One signed qualification statement (add-only)."""

    __tablename__ = "qualification_evidence"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    subject_id: Mapped[int] = mapped_column(ForeignKey("qualification_subjects.id"), index=True)
    subject_digest: Mapped[str] = mapped_column(Digest)
    descriptor_identity: Mapped[str] = mapped_column(Digest)
    run_id: Mapped[str] = mapped_column(String(64))
    envelope_digest: Mapped[str] = mapped_column(Digest)
    signer_keyid: Mapped[str] = mapped_column(String(128))
    core_version: Mapped[str] = mapped_column(String(64))
    owned_paths_digest: Mapped[str] = mapped_column(String(64), default="")
    attested_at: Mapped[datetime] = mapped_column(UtcDateTime)


class QualificationRun(Base):
    """One qualification attempt of a subject at one envelope digest."""

    __tablename__ = "qualification_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    subject_id: Mapped[int] = mapped_column(ForeignKey("qualification_subjects.id"), index=True)
    subject_digest: Mapped[str] = mapped_column(Digest)
    state: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime)
    # the fleet run rendering the subject, once planned (no foreign key: runs may be pruned)
    fleet_run_id: Mapped[str | None] = mapped_column(String(32))


class QualificationEvent(Base):
    """Append-only log of state transitions."""

    __tablename__ = "qualification_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    subject_id: Mapped[int] = mapped_column(ForeignKey("qualification_subjects.id"), index=True)
    from_state: Mapped[str] = mapped_column(String(32))
    to_state: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(String(64), default="")
    cause: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UtcDateTime)
    # the catalog snapshot the state was derived against (NULL on rows older than migration 0017)
    snapshot_digest: Mapped[str | None] = mapped_column(String(64))


# ---------------------------------------------------------------------------------------------
# Publishes (``farm publish``)
# ---------------------------------------------------------------------------------------------


class PublishState(enum.StrEnum):
    PENDING = "pending"  # recorded, not yet attempted (or being attempted)
    FAILED = "failed"  # the last attempt failed; ``farm publish --retry`` attempts it again
    DONE = "done"  # delivered (or nothing to change); its signed record is ``envelope_digest``


class Publish(Base):
    """A run's outputs delivered to a destination (git or OCI). ``destination`` never holds a
    password; ``options`` is canonical JSON (layout, branch, gate); ``reference`` is the commit or
    the manifest digests; ``claimed_until`` is the lease of the one process attempting it."""

    __tablename__ = "publishes"
    __table_args__ = (CheckConstraint(_in_values("state", PublishState), name="state"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(
        ForeignKey("fleet_runs.id", name="fk_publishes_run_id_fleet_runs"), index=True
    )
    kind: Mapped[str] = mapped_column(String(8))
    destination: Mapped[str] = mapped_column(String(1024))
    options: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16), default=PublishState.PENDING.value, index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    reference: Mapped[str | None] = mapped_column(Text)
    envelope_digest: Mapped[str | None] = mapped_column(Digest)
    claimed_until: Mapped[datetime | None] = mapped_column(UtcDateTime)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


# Every column that names a blob in object storage, with the condition under which a row's value
# is a blob. ``farm gc`` treats a blob as referenced if any of these holds its digest, and reports
# a row whose blob is missing. A new blob column must be added here.
BLOB_REFERENCES = tuple(
    (column, column.is_not(None) if condition is None else and_(column.is_not(None), condition))
    for column, condition in (
        (CatalogSnapshot.blob_digest, None),
        (Application.blob_digest, None),
        (ClusterProfile.blob_digest, None),
        (RenderOutput.digest, None),
        # an envelope is a blob of its own only on a row written before revision 0010
        (
            EvidenceRecord.envelope_digest,
            and_(EvidenceRecord.envelope.is_(None), EvidenceRecord.batch_envelope.is_(None)),
        ),
        (RenderTarget.request_pack, None),
        # a request is a blob of its own only on a row written before request packs
        (RenderTarget.request_digest, RenderTarget.request_pack.is_(None)),
        (AuditRecord.envelope_digest, None),
        (QualificationEvidence.envelope_digest, None),
        (Publish.envelope_digest, None),
    )
)
