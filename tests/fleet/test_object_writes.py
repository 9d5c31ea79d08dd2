"""Object writes a fleet run makes on S3 (moto on loopback), counted at the S3 client.

A full run writes each rendered output at most once (outputs many targets share are written once),
and a no-change re-run writes nothing: the snapshot's documents and request packs are already
there, and every target is a cache hit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_store import S3Bucket

from farm.evidence.keys import load_configured_signer
from farm.execution.inline import InlineExecutor
from farm.fleet.service import finish_fleet_run, plan_catalog
from farm.settings import load_settings
from farm.store.context import Storage, open_storage
from farm.store.db import read_scope
from farm.store.models import Trigger
from farm.store.runs import targets_of_run

from .conftest import Catalog


@pytest.fixture
def s3_storage(tmp_path: Path, database_url: str, s3_bucket: S3Bucket) -> Iterator[Storage]:
    settings = load_settings(
        home=tmp_path / "farm",
        database_url=database_url,
        object_store=f"s3://{s3_bucket.name}/farm",
        s3_endpoint_url=s3_bucket.endpoint,
    )
    storage = open_storage(settings)
    yield storage
    storage.close()


def _count_puts(storage: Storage) -> Counter[str]:
    """Every PutObject the store's client sends, by blob digest (the key's last part)."""
    puts: Counter[str] = Counter()

    def count(params: dict, **_: object) -> None:
        puts[params["Key"].rsplit("/", 1)[-1]] += 1

    storage.objects.client.meta.events.register("before-parameter-build.s3.PutObject", count)
    return puts


def _run(storage: Storage, catalog: Catalog) -> str:
    executor = InlineExecutor(storage, load_configured_signer(storage.settings), "test-worker")
    snapshot, planned = plan_catalog(storage, catalog.root, executor=executor)
    finish_fleet_run(storage, snapshot, planned, executor, trigger=Trigger.CLI)
    return planned.run_id


@pytest.mark.timeout(300)
def test_a_full_run_writes_each_output_once_and_a_no_change_run_writes_no_object(
    s3_storage: Storage, catalog: Catalog
) -> None:
    puts = _count_puts(s3_storage)
    run_id = _run(s3_storage, catalog)
    with read_scope(s3_storage.sessions) as session:
        targets = targets_of_run(session, run_id)
    rendered = [target for target in targets if target.state == "succeeded"]
    outputs = {target.output_digest for target in rendered}
    assert len(rendered) == len(targets) == 11
    assert {digest: puts[digest] for digest in outputs} == dict.fromkeys(outputs, 1)
    assert sum(puts[digest] for digest in outputs) <= len(rendered)

    puts.clear()
    _run(s3_storage, catalog)
    assert puts == Counter()
