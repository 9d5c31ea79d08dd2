"""Storage: SQL rows (SQLAlchemy 2, PostgreSQL or SQLite) and content-addressed blobs (S3 or a folder).

Write order is always object storage first, then the row that points at the blob; ``farm gc``
finds orphans both ways.

The entry points for the scheduler and the workers:

- ``context.open_storage(settings=None) -> Storage``: engine, ``sessions`` (a sessionmaker) and
  ``objects`` (the ``ObjectStore``) from the ``FARM_*`` settings. Lower level:
  ``db.create_farm_engine(url)``, ``db.make_session_factory(engine)``, ``db.session_scope(factory)``,
  ``objects.open_object_store(settings)``.
- ``migrate.upgrade(url)``, ``migrate.upgrade_embedded(settings)``: the schema comes only from here.
- ``repository.claim_job(session, job_id, worker=...)`` / ``finish_job(...)`` / ``queue_jobs(...)``:
  conditional UPDATEs whose boolean result says whether this caller won;
  ``claim_job_returning(...)`` claims and returns what a worker needs (``ClaimedJob``) or None.
- ``db.read_scope(factory)``: a read-only transaction (deferred on SQLite: no write lock).
- ``repository.cached_output(session, action_key)``: the action-cache look-up.
- ``outputs.store_output(session, objects, signer, manifests=..., action_key=..., provenance=...)``:
  blobs, signed provenance and rows for one render; the caller commits. ``outputs.sign_and_put``
  signs and writes the blobs beforehand (outside any transaction) and ``store_output(...,
  signed=...)`` then writes only the rows.
- ``audit.verify_output(...)`` and ``audit.sweep(...)``: what ``farm verify`` and ``farm gc`` run.
"""
