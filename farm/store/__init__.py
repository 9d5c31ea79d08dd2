"""Storage: SQL rows (SQLAlchemy 2, PostgreSQL or SQLite) and content-addressed blobs (S3 or a folder).

Write order is always object storage first, then the row that points at the blob; ``farm gc``
finds orphans both ways.

The entry points for the scheduler and the workers:

- ``context.open_storage(settings=None) -> Storage``: engine, ``sessions`` (a sessionmaker) and
  ``objects`` (the ``ObjectStore``) from the ``FARM_*`` settings. Lower level:
  ``db.create_farm_engine(url)``, ``db.make_session_factory(engine)``, ``db.session_scope(factory)``,
  ``objects.open_object_store(settings)``.
- ``migrate.upgrade(url)``, ``migrate.upgrade_embedded(settings)``: the schema comes only from here.
- ``runs``: the run / job / target state machine, every statement that moves one of them:
  ``insert_run`` (bulk), ``claim_job`` (a ``ClaimedJob`` with its open targets, or None),
  ``finish_job`` (the batch's ``TargetResult``s, only while the claim holds), ``release_job``,
  ``requeue_stale_jobs`` (the reconciler), ``finalize_run``; ``cached_outputs``/``cached_failures``
  (bulk cache look-ups), ``target_counts`` and ``targets_of_run`` (queries by run, state, error
  code, application, cluster).
- ``db.read_scope(factory)``: a read-only transaction (deferred on SQLite: no write lock).
- ``snapshots.persist_snapshot(...)``: documents, request packs and the manifest as blobs,
  then the rows; ``snapshots.RequestReader(objects).request(digest, pack)``: a verified ``RenderRequest``.
- ``outputs.put_signed(objects, outputs)`` then ``outputs.record_outputs(session, signer, outputs)``:
  a batch's manifests durable, then its rows (the batch's DSSE envelope once, in
  ``evidence_envelopes``, and an evidence row per output naming it and its subject, which
  ``outputs.evidence_envelope`` reads back); ``outputs.record_failures`` caches core failures.
  Signing is ``farm.evidence.signing.sign_batch``'s job.
- ``audit.verify_output(...)`` and ``audit.sweep(...)``: what ``farm verify`` and ``farm gc`` run.
"""
