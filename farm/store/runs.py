"""The run / job / target state machine: every SQL statement that moves one of them.

A **run** renders one catalog snapshot. A **job** is one application and a batch of its targets;
it goes ``planned → queued → running → succeeded`` (its targets' results recorded, failures
included), and ``running → queued`` again when released (an infrastructure error) or reclaimed by
the reconciler. A **target** is ``queued`` until its job records it, then ``succeeded``,
``failed`` or ``cached``; a target that the action cache (or the failure cache) answers at
planning is ``cached`` from the start and has no job.

Every change is a conditional UPDATE whose row count says whether this caller won, so two
workers racing for one job never both record it, and a worker whose claim was taken over
records nothing. Everything here runs unchanged on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Connection,
    Select,
    String,
    Table,
    and_,
    any_,
    bindparam,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from farm.store.models import (
    CatalogSnapshot,
    FailedAction,
    FleetRun,
    JobState,
    RenderJob,
    RenderTarget,
    RunKind,
    RunState,
    new_ids,
    utcnow,
)
from farm.store.objects import ObjectStore
from farm.store.paging import Ordering, SortKey, keyset_page
from farm.store.repository import bind_moment, driver_cursor, placeholders

JOB_OPEN_STATES = (JobState.PLANNED.value, JobState.QUEUED.value, JobState.RUNNING.value)
JOB_FINAL_STATES = (JobState.SUCCEEDED.value, JobState.FAILED.value)
TARGET_OPEN_STATES = (JobState.QUEUED.value,)
TARGET_FINAL_STATES = (JobState.SUCCEEDED.value, JobState.FAILED.value, JobState.CACHED.value)
CHUNK = 500  # bound parameters per IN list: well under SQLite's and PostgreSQL's limits


KEY_CHUNK = 20_000  # keys per look-up sent as one array parameter (``among``)


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def among(session: Session, column: Any, values: Sequence[str]) -> ColumnElement[bool]:
    """``column IN values`` with the values bound as one parameter: on PostgreSQL, their text
    joined by commas, which ``string_to_array`` splits (psycopg dumps a list parameter value by
    value in Python: 85-99 ms for 20,000 digests against 13-17 ms; values holding a comma are
    bound as an array); on SQLite, a JSON array read by ``json_each``. An ``IN`` list binds a
    parameter per value, and SQLAlchemy renders each into the statement at every execution: most
    of a planning look-up's cost at a million targets, where this costs one statement per
    ``KEY_CHUNK`` keys."""
    if session.get_bind().dialect.name == "postgresql":
        if any("," in value for value in values):  # not the digests and ids it is asked for
            return column == any_(bindparam("among_values", list(values), type_=ARRAY(String)))
        joined = bindparam("among_values", ",".join(values), type_=String)
        return column == any_(func.string_to_array(joined, ","))
    if len(values) <= CHUNK:  # a job's few keys: SQLite reads a short IN list faster than JSON
        return column.in_(values)
    listed = func.json_each(bindparam("among_values", json.dumps(list(values)))).table_valued("value")
    return column.in_(select(listed.c.value))


# ---------------------------------------------------------------------------------------------
# Planning: bulk look-ups and inserts
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CachedFailure:
    """A failure cache row; served only when ``envelope`` (its signed statement) verifies."""

    error_code: str
    error_message: str
    envelope: bytes | None = None


# An action cache entry ``a`` whose evidence record ``e`` (``e.id = a.evidence_id``) is about the
# same key and the same output. Compared as one string (keys and digests are hex: the space cannot
# be part of either), so that the only index of ``evidence_records`` a plan can use here is its
# primary key: a job's generic plan (``farm.store.db.job_plans_kept``), made while the tables were
# empty, read ``ix_evidence_records_subject_digest`` instead, every record ever signed for the
# output, a number that grows with the history.
SIGNED_FOR_ENTRY = "e.action_key || ' ' || e.subject_digest = a.action_key || ' ' || a.output_digest"
# The action cache's answer for keys (``{}``: the condition on ``a.action_key``): only an entry
# whose evidence record is about the same key and the same output. Planning binds its keys as one
# parameter (as ``among`` does); a job's recording lists them (``farm.store.outputs``).
CACHED_LOOKUP = (
    "SELECT a.action_key, a.output_digest FROM action_cache AS a JOIN evidence_records AS e"
    f" ON e.id = a.evidence_id WHERE a.action_key {{}} AND {SIGNED_FOR_ENTRY}"
)
_SQLITE_CACHED_AMONG = CACHED_LOOKUP.format("IN (SELECT value FROM json_each(?))")
_POSTGRESQL_CACHED_AMONG = CACHED_LOOKUP.format("= ANY(string_to_array(%s, ','))")  # as ``among`` binds


def cached_outputs(session: Session, keys: Sequence[str]) -> dict[str, str]:
    """action key → output digest, for the keys the action cache holds.

    Only an entry whose evidence record is about the same action key and the same output is a hit:
    a cache entry re-pointed at another action's output is refused (and the target re-renders).
    Run on the driver's cursor: planning asks it for every target of a run, and SQLAlchemy's
    building of a result row by row cost more than the look-up.
    """
    connection = _core(session)
    postgresql = connection.dialect.name == "postgresql"
    hits: dict[str, str] = {}
    with driver_cursor(connection) as cursor:
        for chunk in chunks(keys, KEY_CHUNK):
            if postgresql:  # action keys: hex digests, never a comma
                cursor.execute(_POSTGRESQL_CACHED_AMONG, (",".join(chunk),))
            else:
                cursor.execute(_SQLITE_CACHED_AMONG, (json.dumps(list(chunk)),))
            hits.update(cursor.fetchall())
    return hits


def cached_failures(session: Session, keys: Sequence[str]) -> dict[str, CachedFailure]:
    """action key → the deterministic failure recorded for it, with its envelope (unchecked)."""
    held = _failure_keys_if_few(session, len(keys))
    if held is not None:  # only the keys the cache holds are looked up
        keys = [key for key in keys if key in held]
    hits: dict[str, CachedFailure] = {}
    for chunk in chunks(keys, KEY_CHUNK):
        rows = session.execute(
            select(
                FailedAction.action_key,
                FailedAction.error_code,
                FailedAction.error_message,
                FailedAction.envelope,
            ).where(among(session, FailedAction.action_key, chunk))
        )
        hits.update({key: CachedFailure(code, message, envelope) for key, code, message, envelope in rows})
    return hits


def _failure_keys_if_few(session: Session, asked: int) -> set[str] | None:
    """Every action key the failure cache holds when they are fewer than a quarter of the ``asked``
    keys, else None. A fleet fails far fewer actions than it renders: reading the cache's keys
    (one scan of its primary key, stopped past that quarter) cost a fraction of looking up every
    planned key (about 170 ms for 100,000 keys on SQLite, most of it binding and reading them)."""
    limit = asked // 4
    held = session.scalars(select(FailedAction.action_key).limit(limit + 1)).all()
    return None if len(held) > limit else set(held)


# An earlier run's target row copied (``copy_answered_targets``) when the action cache still answers
# its key as ``cached_outputs`` answers it (the entry's evidence record about the same key and
# output) and its request pack is the one the snapshot names for its application (the packs bound
# as JSON, application → digest). Its id is the run's UUIDv7 prefix and a counter (as ``new_ids``
# makes them), ascending in the order the rows go in, so that each index entry of the copy is
# appended, not inserted. The statement returns each copy's output, where reading them back took
# a look-up in the table per row.
#
# On SQLite the counter is the earlier row's rowid less the earlier run's first: unique as rowids
# are, with no window over the rows to number them (a seventh of the copy's instructions); and the
# evidence is compared column by column, with its index on the output ruled out (``+``), not as
# one string made per row. PostgreSQL numbers the rows (a row has no stable number of its own) and
# keeps ``SIGNED_FOR_ENTRY``, for its plans.
_COPY_ANSWERED = (
    "INSERT INTO render_targets (id, run_id, job_id, application, cluster_profile, selection,"
    " request_digest, request_pack, action_key, state, error_code, error_message, output_digest,"
    " created_at, finished_at)"
    " SELECT ? || {counter}, ?, NULL, p.application, p.cluster_profile, p.selection, p.request_digest,"
    f" p.request_pack, p.action_key, '{JobState.CACHED.value}', NULL, NULL, a.output_digest, ?, ?"
    # each application's rows of the earlier run, through the unique index that starts with
    # (run_id, application): SQLite keeps the packs as the outer loop only when told (CROSS JOIN)
    " FROM {packs} AS k {join} render_targets AS p"
    " ON p.run_id = ? AND p.application = k.key AND p.request_pack = k.value"
    " JOIN action_cache AS a ON a.action_key = p.action_key"
    " JOIN evidence_records AS e ON e.id = a.evidence_id"
    " WHERE {signed}"
    " ORDER BY {order}"
    " RETURNING output_digest"
)
_COPY_ANSWERED_SQL = {
    "sqlite": _COPY_ANSWERED.format(
        counter="printf('%08x', p.rowid - ?)",
        packs="json_each(?)",
        join="CROSS JOIN",
        signed="+e.action_key = a.action_key AND +e.subject_digest = a.output_digest",
        order="p.rowid",
    ),
    "postgresql": _COPY_ANSWERED.format(
        counter="lpad(to_hex(row_number() OVER (ORDER BY p.id) - 1), 8, '0')",
        packs="jsonb_each_text(CAST(? AS jsonb))",
        join="JOIN",
        signed=SIGNED_FOR_ENTRY,
        order="p.id",
    ),
}
_SQLITE_FIRST_ROWID = "SELECT min(rowid) FROM render_targets WHERE run_id = ?"


def copy_answered_targets(
    session: Session, earlier_run: str, run_id: str, packs: Mapping[str, str], now: datetime
) -> list[str]:
    """Write target rows of ``run_id`` as copies of ``earlier_run``'s, in one statement: each row of
    an application whose request pack is still ``packs[application]`` (the snapshot's), whose key
    the action cache still answers, ``cached`` with that output. Where the planner would ask the
    cache for each key and build each row. Returns the output of each row copied (as many as
    rows); ``copied_targets`` reads the rows back, ``discard_targets`` removes them."""
    connection = _core(session)
    dialect = connection.dialect
    prefix = new_ids(1)[0][:24]
    moment = bind_moment(dialect, now)
    rest = (run_id, moment, moment, json.dumps(dict(packs)), earlier_run)
    with driver_cursor(connection) as cursor:
        if dialect.name == "sqlite":
            cursor.execute(_SQLITE_FIRST_ROWID, (earlier_run,))
            (first,) = cursor.fetchone()
            parameters: tuple[Any, ...] = (prefix, first or 0, *rest)
        else:
            parameters = (prefix, *rest)
        cursor.execute(placeholders(dialect, _COPY_ANSWERED_SQL[dialect.name]), parameters)
        return [digest for (digest,) in cursor.fetchall()]


def copied_targets(session: Session, run_id: str) -> list[tuple[str, str, str, str | None, str | None]]:
    """(application, cluster, selection, request digest, output digest) of each target row of
    ``run_id``."""
    connection = _core(session)
    with driver_cursor(connection) as cursor:
        cursor.execute(
            placeholders(
                connection.dialect,
                "SELECT application, cluster_profile, selection, request_digest, output_digest"
                " FROM render_targets WHERE run_id = ?",
            ),
            (run_id,),
        )
        return [tuple(row) for row in cursor.fetchall()]


def discard_targets(session: Session, run_id: str) -> None:
    """Delete the target rows of a run not recorded yet (a copy ``copy_answered_targets`` made that
    the caller does not keep)."""
    connection = _core(session)
    with driver_cursor(connection) as cursor:
        cursor.execute(
            placeholders(connection.dialect, "DELETE FROM render_targets WHERE run_id = ?"), (run_id,)
        )


# The columns of a target row given as a sequence (``insert_run``), in this order.
TARGET_COLUMNS = (
    "id",
    "run_id",
    "job_id",
    "application",
    "cluster_profile",
    "selection",
    "request_digest",
    "request_pack",
    "action_key",
    "state",
    "error_code",
    "error_message",
    "output_digest",
    "created_at",
    "finished_at",
)


def insert_run(
    session: Session,
    run: dict[str, Any],
    jobs: list[dict[str, Any]],
    targets: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]],
) -> None:
    """A run with its jobs (queued) and targets, in bulk. A target row is a mapping naming every
    column of ``render_targets``, or a sequence of its values in ``TARGET_COLUMNS`` order (the
    planner's: a plan makes one per target, and a dict of them costs more than the row's insert).

    Core statements on the tables, not ORM bulk inserts: every row the planner builds has every
    column, so nothing needs the ORM's per-row bookkeeping. The targets (one row per target, a
    no-change run's main cost) go to the driver as tuples: PostgreSQL takes them by ``COPY``,
    SQLite by one ``executemany``."""
    connection = session.connection()
    connection.execute(insert(FleetRun.__table__), [run])
    if jobs:
        connection.execute(insert(RenderJob.__table__), jobs)
    if targets:
        if isinstance(targets[0], Mapping):
            insert_rows(connection, RenderTarget.__table__, targets)  # type: ignore[arg-type]
        else:
            insert_rows(connection, RenderTarget.__table__, targets, TARGET_COLUMNS)  # type: ignore[arg-type]


def insert_rows(
    connection: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]],
    names: Sequence[str] | None = None,
) -> None:
    """Insert ``rows`` (each naming every column of ``table``; with ``names``, each a sequence of
    the values of those columns, every column of the table among them) without SQLAlchemy's
    per-row, per-parameter work: each column's bind processing is done once per distinct value (a
    plan's rows share their timestamps), the rows handed to the driver as tuples."""
    dialect = connection.dialect
    if names is None:
        columns = list(table.columns)
        values: Iterable[Sequence[Any]] = map(itemgetter(*(column.name for column in columns)), rows)  # type: ignore[arg-type]
    else:
        columns = [table.columns[name] for name in names]
        if len(set(names)) != len(table.columns):
            raise ValueError(f"insert_rows: {table.name}'s rows must give every column once")
        values = rows  # type: ignore[assignment]
    processors = [
        (index, _adapted(processor) if dialect.name == "sqlite" else processor, {})
        for index, column in enumerate(columns)
        if (processor := column.type._cached_bind_processor(dialect)) is not None  # noqa: SLF001 - with the dialect's own conversion
    ]
    if processors:
        values = (_processed(row, processors) for row in values)
    elif names is not None:
        values = map(tuple, values)
    if dialect.name == "postgresql":
        preparer = dialect.identifier_preparer
        quoted = ", ".join(preparer.format_column(column) for column in columns)
        driver = connection.connection.driver_connection
        with (
            driver.cursor() as cursor,
            cursor.copy(f"COPY {preparer.format_table(table)} ({quoted}) FROM STDIN") as copy,
        ):
            for row in values:
                copy.write_row(row)
        return
    statement = insert(table).compile(dialect=dialect, column_keys=[column.name for column in columns])
    positional = statement.positiontup
    if positional is None or [name for name in positional] != [column.key for column in columns]:
        raise RuntimeError(f"insert_rows: {table.name}'s INSERT does not bind its columns in order")
    connection.exec_driver_sql(str(statement), list(values))


def _adapted(process: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``process``, then the adapter sqlite3 would apply to its result (a moment: the default
    adapter's ``isoformat(" ")``), so that too is done once per distinct value, not per row."""

    def adapted(value: Any) -> Any:
        done = process(value)
        adapter = sqlite3.adapters.get((type(done), sqlite3.PrepareProtocol))
        return done if adapter is None else adapter(done)

    return adapted


def _processed(row: Sequence[Any], processors: list[tuple[int, Any, dict[Any, Any]]]) -> tuple[Any, ...]:
    converted = list(row)
    for index, process, memo in processors:
        value = converted[index]
        if value is not None:
            try:
                converted[index] = memo[value]
            except KeyError:
                converted[index] = memo[value] = process(value)
    return tuple(converted)


# ---------------------------------------------------------------------------------------------
# Claiming, recording and releasing a job
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimedTarget:
    id: str
    cluster_profile: str
    selection: str
    request_digest: str
    action_key: str
    cached_output: str | None  # the action cache's output for the key, found at claim time
    cached_failure: CachedFailure | None
    request_pack: str | None = None  # the pack holding the request (None: a blob of its own)


@dataclass(frozen=True)
class ClaimedJob:
    """What a worker needs of the job it just claimed: its row, its run's snapshot, its open targets."""

    id: str
    run_id: str
    application: str
    batch_key: str
    snapshot_digest: str
    targets: tuple[ClaimedTarget, ...]


# A job's statements, written once per dialect as text and run on the driver's cursor
# (``farm.store.repository.driver_cursor``): SQLAlchemy's compiling and per-parameter processing
# cost more than the database's own work for them.

_CLAIM_UPDATE = (
    "UPDATE render_jobs SET state = 'running', attempts = render_jobs.attempts + 1, claimed_by = ?,"
    " error_code = NULL, error_message = NULL, started_at = ? WHERE render_jobs.id = ? AND render_jobs.state = 'queued'"
)
# an open target with what the action cache (only an entry whose evidence record is about the same
# key and output) and the failure cache hold for its key
_OPEN_TARGET_COLUMNS = (
    "t.id, t.cluster_profile, t.selection, t.request_digest, t.action_key, a.output_digest, t.request_pack,"
    " f.error_code, f.error_message, f.envelope"
)
_OPEN_TARGET_JOINS = (
    " LEFT OUTER JOIN action_cache AS a ON a.action_key = t.action_key AND EXISTS (SELECT 1 FROM"
    f" evidence_records AS e WHERE e.id = a.evidence_id AND {SIGNED_FOR_ENTRY})"
    " LEFT OUTER JOIN failed_actions AS f ON f.action_key = t.action_key"
)
_SQLITE_CLAIM = (
    f"{_CLAIM_UPDATE} RETURNING id, run_id, application, batch_key,"
    " (SELECT fleet_runs.snapshot_digest FROM fleet_runs WHERE id = run_id)"
)
_SQLITE_OPEN_TARGETS = (
    f"SELECT {_OPEN_TARGET_COLUMNS} FROM render_targets AS t{_OPEN_TARGET_JOINS}"
    " WHERE t.job_id = ? AND t.state = 'queued' ORDER BY t.cluster_profile, t.selection"
)
# PostgreSQL: the claim and the read of its targets in one statement (the read runs whether or not
# the claim won; an empty answer is a lost claim, a row with no target a claim of a recorded batch)
_POSTGRESQL_CLAIM = (
    "WITH job AS (" + _CLAIM_UPDATE.replace("?", "%s") + " RETURNING id, run_id, application, batch_key)"
    " SELECT job.id, job.run_id, job.application, job.batch_key,"
    " (SELECT fleet_runs.snapshot_digest FROM fleet_runs WHERE fleet_runs.id = job.run_id), targets.*"
    f" FROM job LEFT JOIN LATERAL (SELECT {_OPEN_TARGET_COLUMNS} FROM render_targets AS t{_OPEN_TARGET_JOINS}"
    " WHERE t.job_id = job.id AND t.state = 'queued') AS targets ON true"
    " ORDER BY targets.cluster_profile, targets.selection"
)


def _core(session: Session | Connection) -> Connection:
    """The connection of ``session``'s transaction: the job path's statements are Core statements,
    and a Core execution skips the ORM session's per-statement work."""
    return session.connection() if isinstance(session, Session) else session


def claim_job(
    session: Session | Connection, job_id: str, *, worker: str, now: datetime | None = None
) -> ClaimedJob | None:
    """queued → running for ``worker``; the job's data if this call won, None otherwise.

    Counts the attempt. Reads the targets the job has not recorded yet, each with what the action
    and failure caches already hold for its key (a twin in another run may have rendered it).
    The caller commits; a second claimer blocks on the row (PostgreSQL) or the write lock
    (SQLite), then finds the state changed and gets None.
    """
    connection = _core(session)
    moment = bind_moment(connection.dialect, now or utcnow())
    with driver_cursor(connection) as cursor:
        if connection.dialect.name == "postgresql":
            cursor.execute(_POSTGRESQL_CLAIM, (worker, moment, job_id))
            rows = cursor.fetchall()
            if not rows:
                return None
            job_id, run_id, application, batch_key, snapshot = rows[0][:5]
            found = [row[5:] for row in rows if row[5] is not None]
        else:
            cursor.execute(_SQLITE_CLAIM, (worker, moment, job_id))
            row = cursor.fetchone()
            if row is None:
                return None
            job_id, run_id, application, batch_key, snapshot = row
            cursor.execute(_SQLITE_OPEN_TARGETS, (job_id,))
            found = cursor.fetchall()
    targets = tuple(
        ClaimedTarget(
            target_id,
            cluster,
            selection,
            request_digest or "",
            key,
            output,
            CachedFailure(code, message, bytes(envelope) if envelope is not None else None)
            if code is not None
            else None,
            pack,
        )
        for target_id, cluster, selection, request_digest, key, output, pack, code, message, envelope in found
    )
    return ClaimedJob(job_id, run_id, application, batch_key, snapshot or "", targets)


@dataclass(frozen=True)
class TargetResult:
    """What a job records about one of its targets."""

    target_id: str
    state: JobState
    output_digest: str | None = None
    error_code: str | None = None
    error_message: str | None = None

    def __post_init__(self) -> None:
        if self.state.value not in TARGET_FINAL_STATES:
            raise ValueError(f"state: {self.state!r} is not a final target state")
        if self.state is JobState.FAILED and not self.error_code:
            raise ValueError("error_code: a failed target needs an error code")


_FINISH_UPDATE = (
    "UPDATE render_jobs SET state = 'succeeded', error_code = NULL, finished_at = ?"
    " WHERE render_jobs.id = ? AND render_jobs.state = 'running' AND render_jobs.claimed_by = ?"
)
_SQLITE_RECORD_TARGET = (
    "UPDATE render_targets SET state = ?, error_code = ?, error_message = ?, output_digest = ?, finished_at = ?"
    " WHERE render_targets.id = ? AND render_targets.state = 'queued'"
)
# PostgreSQL: the job and its batch's results in one statement, the results as arrays (one
# parameter each to bind, not one per target), recorded only when the job's update matched
_POSTGRESQL_FINISH = (
    "WITH job AS ("
    + _FINISH_UPDATE.replace("?", "%s")
    + " RETURNING id), targets AS (UPDATE render_targets SET state = v.state, error_code = v.code,"
    " error_message = v.message, output_digest = v.output, finished_at = %s"
    " FROM unnest(%b::varchar[], %b::varchar[], %b::varchar[], %b::varchar[], %b::text[])"
    " AS v(id, state, output, code, message)"
    " WHERE render_targets.id = v.id AND render_targets.job_id = %s AND render_targets.state = 'queued'"
    " AND EXISTS (SELECT FROM job))"
    " SELECT count(*) FROM job"
)


def finish_job(
    session: Session | Connection,
    job_id: str,
    *,
    worker: str,
    results: Sequence[TargetResult],
    now: datetime | None = None,
) -> bool:
    """running → succeeded with every result of the batch, only if ``worker`` still holds the claim.

    False (and nothing written by this call) when the claim was lost: the caller rolls back.
    """
    connection = _core(session)
    moment = bind_moment(connection.dialect, now or utcnow())
    with driver_cursor(connection) as cursor:
        if connection.dialect.name == "postgresql":
            cursor.execute(
                _POSTGRESQL_FINISH,
                (
                    moment,
                    job_id,
                    worker,
                    moment,
                    [result.target_id for result in results],
                    [result.state.value for result in results],
                    [result.output_digest for result in results],
                    [result.error_code for result in results],
                    [result.error_message for result in results],
                    job_id,
                ),
            )
            return cursor.fetchone()[0] == 1
        cursor.execute(_FINISH_UPDATE, (moment, job_id, worker))
        if cursor.rowcount != 1:
            return False
        if results:
            cursor.executemany(
                _SQLITE_RECORD_TARGET,
                [
                    (
                        result.state.value,
                        result.error_code,
                        result.error_message,
                        result.output_digest,
                        moment,
                        result.target_id,
                    )
                    for result in results
                ],
            )
    return True


def release_job(session: Session, job_id: str, *, worker: str, error: str | None = None) -> bool:
    """running → queued, only if ``worker`` holds the claim (an infrastructure error, to retry)."""
    statement = (
        update(RenderJob)
        .where(
            RenderJob.id == job_id, RenderJob.state == JobState.RUNNING.value, RenderJob.claimed_by == worker
        )
        .values(state=JobState.QUEUED.value, claimed_by=None, queued_at=utcnow(), error_message=error)
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]


def queue_jobs(session: Session, job_ids: Sequence[str], *, now: datetime | None = None) -> int:
    """planned → queued for the given jobs; returns how many moved."""
    moved = 0
    for chunk in chunks(job_ids):
        statement = (
            update(RenderJob)
            .where(RenderJob.id.in_(chunk), RenderJob.state == JobState.PLANNED.value)
            .values(state=JobState.QUEUED.value, queued_at=now or utcnow())
            .execution_options(synchronize_session=False)
        )
        moved += session.execute(statement).rowcount  # type: ignore[attr-defined]
    return moved


def job_counts_by_state(session: Session) -> dict[str, int]:
    """Every job of every run by state (the metrics' gauges, read at scrape time)."""
    rows = session.execute(select(RenderJob.state, func.count()).group_by(RenderJob.state))
    return {state: count for state, count in rows}


def core_versions_of_jobs(session: Session, job_ids: Sequence[str]) -> dict[str, str]:
    """The core version each job's run was planned under, by job id (its queue on a rolling
    upgrade: only a worker of that core can render it)."""
    versions: dict[str, str] = {}
    for chunk in chunks(list(job_ids)):
        rows = session.execute(
            select(RenderJob.id, FleetRun.core_version)
            .join(FleetRun, FleetRun.id == RenderJob.run_id)
            .where(RenderJob.id.in_(chunk))
        )
        versions.update({job_id: version for job_id, version in rows})
    return versions


def requeue_stale_jobs(session: Session, cutoff: datetime) -> list[tuple[str, str]]:
    """Jobs to send again, as (job id, batch key): running ones started before ``cutoff`` (their
    worker is presumed dead) go back to queued, and queued ones waiting since before ``cutoff``
    (their message was lost) are stamped so the next pass waits another full timeout."""
    now = utcnow()
    stuck = list(
        session.execute(
            select(RenderJob.id, RenderJob.claimed_by).where(
                RenderJob.state == JobState.RUNNING.value, RenderJob.started_at < cutoff
            )
        )
    )
    for job_id, claimed_by in stuck:
        session.execute(
            update(RenderJob)
            .where(
                RenderJob.id == job_id,
                RenderJob.state == JobState.RUNNING.value,
                RenderJob.claimed_by == claimed_by,
            )
            .values(state=JobState.QUEUED.value, queued_at=cutoff, claimed_by=None)
            .execution_options(synchronize_session=False)
        )
    rows = session.execute(
        select(RenderJob.id, RenderJob.batch_key).where(
            RenderJob.state == JobState.QUEUED.value,
            or_(RenderJob.queued_at <= cutoff, RenderJob.queued_at.is_(None)),
        )
    )
    jobs = [(job_id, key) for job_id, key in rows]
    for chunk in chunks([job_id for job_id, _ in jobs]):
        session.execute(
            update(RenderJob)
            .where(RenderJob.id.in_(chunk), RenderJob.state == JobState.QUEUED.value)
            .values(queued_at=now)
            .execution_options(synchronize_session=False)
        )
    return jobs


# ---------------------------------------------------------------------------------------------
# Run completion and summaries
# ---------------------------------------------------------------------------------------------


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


# Run completion, on the driver's cursor: every job's recording asks it (SQLite, in the recording
# transaction; PostgreSQL, after the commit), and SQLAlchemy's execution of the Core statement cost
# several times the database's probe of ix_render_jobs_run_id_state.
_OPEN_JOB = (
    "EXISTS (SELECT 1 FROM render_jobs WHERE render_jobs.run_id = ?"
    f" AND render_jobs.state IN ({_sql_list(JOB_OPEN_STATES)}))"
)
_ANY_OPEN = f"SELECT {_OPEN_JOB}"
_FINALIZE = (
    # two probes of ix_render_targets_run_id_state_error: one ``OR`` would read the run's rows
    "UPDATE fleet_runs SET state = CASE WHEN EXISTS (SELECT 1 FROM render_targets"
    f" WHERE render_targets.run_id = ? AND render_targets.state = '{JobState.FAILED.value}')"
    " OR EXISTS (SELECT 1 FROM render_targets WHERE render_targets.run_id = ?"
    f" AND render_targets.state = '{JobState.CACHED.value}' AND render_targets.error_code IS NOT NULL)"
    f" THEN '{RunState.COMPLETED_WITH_FAILURES.value}' ELSE '{RunState.COMPLETED.value}' END,"
    f" finished_at = ? WHERE fleet_runs.id = ? AND fleet_runs.state = '{RunState.RUNNING.value}'"
    f" AND NOT {_OPEN_JOB}"
)


def run_jobs_taken(session: Session, run_id: str) -> int:
    """How many jobs of the run a worker has claimed at least once."""
    query = select(func.count()).where(RenderJob.run_id == run_id, RenderJob.attempts > 0)
    return int(session.scalar(query) or 0)


def _fail_open(
    session: Session,
    jobs: ColumnElement[bool],
    targets: ColumnElement[bool],
    code: str,
    message: str,
    now: datetime,
) -> int:
    """The open jobs matching ``jobs`` → failed, and the open targets matching ``targets`` failed
    with ``code`` and ``message``; returns how many jobs moved."""
    moved = session.execute(
        update(RenderJob)
        .where(jobs, RenderJob.state.in_(JOB_OPEN_STATES))
        .values(
            state=JobState.FAILED.value,
            claimed_by=None,
            finished_at=now,
            error_code=code,
            error_message=message,
        )
        .execution_options(synchronize_session=False)
    ).rowcount  # type: ignore[attr-defined]
    if moved:
        session.execute(
            update(RenderTarget)
            .where(targets, RenderTarget.state.in_(TARGET_OPEN_STATES))
            .values(state=JobState.FAILED.value, error_code=code, error_message=message, finished_at=now)
            .execution_options(synchronize_session=False)
        )
    return int(moved)


def fail_open_job(
    session: Session, job_id: str, *, code: str, message: str, now: datetime | None = None
) -> str | None:
    """An open job → failed, with every target it has not recorded failed with ``code`` (a job
    whose retries ran out). Returns the job's run id, or None when the job was no longer open."""
    jobs, targets = RenderJob.id == job_id, RenderTarget.job_id == job_id
    if _fail_open(session, jobs, targets, code, message, now or utcnow()) != 1:
        return None
    return session.scalar(select(RenderJob.run_id).where(RenderJob.id == job_id))


def fail_open_jobs_of_run(
    session: Session, run_id: str, *, code: str, message: str, now: datetime | None = None
) -> int:
    """Every open job of a run → failed, and every target still open with it, with ``code`` and
    ``message`` (the executor that was to run them failed). Returns how many jobs moved."""
    jobs, targets = RenderJob.run_id == run_id, RenderTarget.run_id == run_id
    return _fail_open(session, jobs, targets, code, message, now or utcnow())


def run_has_open_jobs(session: Session | Connection, run_id: str) -> bool:
    connection = _core(session)
    with driver_cursor(connection) as cursor:
        cursor.execute(placeholders(connection.dialect, _ANY_OPEN), (run_id,))
        return bool(cursor.fetchone()[0])


def finalize_run(session: Session | Connection, run_id: str, *, now: datetime | None = None) -> bool:
    """running → completed (or completed_with_failures) once no job of the run is open; idempotent."""
    connection = _core(session)
    moment = bind_moment(connection.dialect, now or utcnow())
    with driver_cursor(connection) as cursor:
        cursor.execute(placeholders(connection.dialect, _FINALIZE), (run_id, run_id, moment, run_id, run_id))
        return cursor.rowcount == 1


CACHED_FAILURE = "cached_failure"  # the count of cached targets that carry a failure


def count_label(state: str, error_code: str | None) -> str:
    """The label a target is counted under: its state, or ``cached_failure`` for a cached target
    that carries a failure (``target_counts_of_runs`` applies the same rule in SQL)."""
    return CACHED_FAILURE if state == JobState.CACHED.value and error_code else state


def target_counts(session: Session, run_id: str) -> dict[str, int]:
    """Targets of a run by state; cached failures are counted apart under ``cached_failure``."""
    return target_counts_of_runs(session, [run_id]).get(run_id, {})


def target_counts_of_runs(session: Session, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """``target_counts`` of many runs (the runs list): a grouped count by state, then the cached
    failures among the cached, both read from ``ix_render_targets_run_id_state_error`` alone (a
    label computed per row, grouped, cost five times as much at 100,000 targets)."""
    counts: dict[str, Counter[str]] = {}
    cached = JobState.CACHED.value
    for chunk in chunks(list(run_ids)):
        rows = session.execute(
            select(RenderTarget.run_id, RenderTarget.state, func.count())
            .where(RenderTarget.run_id.in_(chunk))
            .group_by(RenderTarget.run_id, RenderTarget.state)
        )
        for run_id, state, count in rows:
            counts.setdefault(run_id, Counter())[state] += count
        failures = session.execute(
            select(RenderTarget.run_id, func.count())
            .where(
                RenderTarget.run_id.in_(chunk),
                RenderTarget.state == cached,
                RenderTarget.error_code.is_not(None),
            )
            .group_by(RenderTarget.run_id)
        )
        for run_id, count in failures:
            counter = counts[run_id]
            counter[CACHED_FAILURE] += count
            counter[cached] -= count
            if not counter[cached]:
                del counter[cached]
    return {run_id: dict(counter) for run_id, counter in counts.items()}


@dataclass(frozen=True)
class TargetRow:
    application: str
    cluster_profile: str
    selection: str
    state: str
    output_digest: str | None
    error_code: str | None
    error_message: str | None
    action_key: str = ""
    request_digest: str | None = None
    target_id: str = ""
    job_id: str | None = None
    request_pack: str | None = None


@dataclass(frozen=True)
class TargetFilter:
    states: tuple[str, ...] = ()
    error_code: str | None = None
    application: str | None = None
    cluster_profile: str | None = None
    failed_only: bool = False


# The columns of a TargetRow, in its field order.
TARGET_ROW_COLUMNS = (
    RenderTarget.application,
    RenderTarget.cluster_profile,
    RenderTarget.selection,
    RenderTarget.state,
    RenderTarget.output_digest,
    RenderTarget.error_code,
    RenderTarget.error_message,
    RenderTarget.action_key,
    RenderTarget.request_digest,
    RenderTarget.id,
    RenderTarget.job_id,
    RenderTarget.request_pack,
)


_APPLICATION = SortKey("application", RenderTarget.application)
_CLUSTER = SortKey("cluster_profile", RenderTarget.cluster_profile)
_SELECTION = SortKey("selection", RenderTarget.selection)
_TARGET_ID = SortKey("target_id", RenderTarget.id)
TARGET_ORDERINGS: dict[str, Ordering] = {
    "application": (_APPLICATION, _CLUSTER, _SELECTION, _TARGET_ID),
    "cluster": (_CLUSTER, _APPLICATION, _SELECTION, _TARGET_ID),
    "state": (SortKey("state", RenderTarget.state), _APPLICATION, _CLUSTER, _SELECTION, _TARGET_ID),
}


def targets_of_run(session: Session, run_id: str, where: TargetFilter | None = None) -> list[TargetRow]:
    """The targets of a run, ordered by application, cluster and selection, optionally filtered."""
    where = where or TargetFilter()
    statement = filter_targets(select(*TARGET_ROW_COLUMNS), run_id, where)
    if where.failed_only and _core(session).dialect.name == "sqlite":
        # Ordered here, as SQLite's BINARY collation orders (by code point): ordered by the query,
        # SQLite reads every row of the run through the unique index to skip the sort, where the
        # failures are a few ranges of ix_render_targets_run_id_state_error (``farm run``'s
        # summary: 54 ms of a 100,000-target no-change run, docs/performance.md)
        rows = [TargetRow(*row) for row in session.execute(statement)]
        return sorted(rows, key=lambda row: (row.application, row.cluster_profile, row.selection))
    statement = statement.order_by(
        RenderTarget.application, RenderTarget.cluster_profile, RenderTarget.selection
    )
    return [TargetRow(*row) for row in session.execute(statement)]


def targets_page(
    session: Session, run_id: str, where: TargetFilter, sort: str, after: Sequence[Any] | None, limit: int
) -> list[TargetRow]:
    """One page of a run's targets that ``where`` selects, in ``sort`` order (``TARGET_ORDERINGS``),
    after the key ``after``."""
    statement = filter_targets(select(*TARGET_ROW_COLUMNS), run_id, where)
    statement = keyset_page(statement, TARGET_ORDERINGS[sort], after, limit)
    return [TargetRow(*row) for row in session.execute(statement)]


def filter_targets(statement: Select[Any], run_id: str, where: TargetFilter) -> Select[Any]:
    """``statement`` over the targets of one run that ``where`` selects."""
    statement = statement.where(RenderTarget.run_id == run_id)
    if where.states:
        statement = statement.where(RenderTarget.state.in_(where.states))
    if where.failed_only:  # every state named: a range of ix_render_targets_run_id_state_error each
        every_state = [state.value for state in JobState]
        statement = statement.where(RenderTarget.state.in_(every_state), RenderTarget.error_code.is_not(None))
    if where.error_code is not None:
        statement = statement.where(RenderTarget.error_code == where.error_code)
    if where.application is not None:
        statement = statement.where(RenderTarget.application == where.application)
    if where.cluster_profile is not None:
        statement = statement.where(RenderTarget.cluster_profile == where.cluster_profile)
    return statement


def jobs_of_run(session: Session, run_id: str) -> list[RenderJob]:
    return list(session.scalars(select(RenderJob).where(RenderJob.run_id == run_id).order_by(RenderJob.id)))


def latest_output_digest(session: Session, application: str, cluster: str) -> str | None:
    """The output of the most recently finished target (application, cluster) that has one. Read
    run by run: each run's rows of the target are found through its unique (run, application,
    ClusterProfile, selection) index, as no index leads with the application (revision 0022)."""
    return session.scalar(
        select(RenderTarget.output_digest)
        .where(
            RenderTarget.run_id.in_(select(FleetRun.id)),  # a probe per run, not a scan of the table
            RenderTarget.application == application,
            RenderTarget.cluster_profile == cluster,
            RenderTarget.output_digest.is_not(None),
        )
        .order_by(RenderTarget.finished_at.desc(), RenderTarget.created_at.desc())
        .limit(1)
    )


def newest_runs(session: Session, limit: int) -> list[FleetRun]:
    return list(session.scalars(select(FleetRun).order_by(FleetRun.created_at.desc()).limit(limit)))


COMPLETE_RUN_STATES = (RunState.COMPLETED.value, RunState.COMPLETED_WITH_FAILURES.value)


def run_by_id(session: Session, run_id: str) -> FleetRun | None:
    return session.get(FleetRun, run_id)


def latest_fleet_run(
    session: Session, objects: ObjectStore, fleet: str, *, before: str | None = None
) -> FleetRun | None:
    """The newest complete run of kind ``fleet`` of the fleet named ``fleet`` (planned before the
    run ``before``, when given): the baseline of ``farm plan``, ``farm diff`` and the dashboard.

    A qualification's partial run is never one. Runs recorded before runs had a fleet column
    name their fleet only through their snapshot, whose manifest is read for them. Two bounded
    reads, whatever the number of runs before: the newest run naming the fleet, then any run
    without a name recorded after it (reading every complete run, newest first, cost a
    millisecond per hundred runs on every ``farm run``).
    """
    complete = [FleetRun.kind == RunKind.FLEET.value, FleetRun.state.in_(COMPLETE_RUN_STATES)]
    if before is not None:
        created = select(FleetRun.created_at).where(FleetRun.id == before).scalar_subquery()
        complete += [FleetRun.id != before, FleetRun.created_at <= created]
    newest_first = (FleetRun.created_at.desc(), FleetRun.id.desc())
    named = session.scalars(
        select(FleetRun).where(*complete, FleetRun.fleet == fleet).order_by(*newest_first).limit(1)
    ).first()
    unnamed = select(FleetRun).where(*complete, FleetRun.fleet.is_(None))
    if named is not None:
        unnamed = unnamed.where(
            or_(
                FleetRun.created_at > named.created_at,
                and_(FleetRun.created_at == named.created_at, FleetRun.id > named.id),
            )
        )
    names: dict[str, str | None] = {}
    for run in session.scalars(unnamed.order_by(*newest_first)):
        if run.snapshot_digest not in names:
            names[run.snapshot_digest] = _snapshot_name(session, objects, run.snapshot_digest)
        if names[run.snapshot_digest] == fleet:
            return run
    return named


def _snapshot_name(session: Session, objects: ObjectStore, digest: str) -> str | None:
    blob = session.scalar(select(CatalogSnapshot.blob_digest).where(CatalogSnapshot.digest == digest))
    return json.loads(objects.get(blob)).get("name") if blob else None


def snapshot_manifest_digest(session: Session, snapshot_digest: str) -> str | None:
    """The blob holding the manifest of the stored snapshot ``snapshot_digest``."""
    return session.scalar(
        select(CatalogSnapshot.blob_digest).where(CatalogSnapshot.digest == snapshot_digest)
    )
