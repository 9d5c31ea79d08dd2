"""Two ``farm run`` of one catalog at once on one embedded home: every action key is recorded
once (one evidence record, one cache entry), whoever records it first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from farm.settings import load_settings
from farm.store import models
from farm.store.context import open_storage
from farm.store.db import read_scope

from .conftest import make_catalog

APPS = 10
TARGETS = APPS * 3 - 1


@pytest.mark.timeout(400)
def test_two_concurrent_runs_on_one_home_record_each_action_key_once(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=APPS)
    home = tmp_path / "home"
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(home), "FARM_DAEMON": "off", "FARM_BATCH_SIZE": "1"}
    farm = [sys.executable, "-m", "farm"]
    assert subprocess.run([*farm, "db", "upgrade"], env=env, capture_output=True).returncode == 0
    runs = [
        subprocess.Popen(
            [*farm, "run", str(catalog.root), "--json", "--processes", "1"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    summaries = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0 and "Traceback" not in err, err
        summaries.append(json.loads(out))
    assert all(summary["state"] == "completed" for summary in summaries)
    storage = open_storage(load_settings(home=home))
    try:
        with read_scope(storage.sessions) as session:
            evidence = dict(
                session.execute(
                    select(models.EvidenceRecord.action_key, func.count()).group_by(
                        models.EvidenceRecord.action_key
                    )
                ).all()
            )
            entries = session.scalar(select(func.count()).select_from(models.ActionCacheEntry))
            targets = dict(
                session.execute(
                    select(models.RenderTarget.state, func.count()).group_by(models.RenderTarget.state)
                ).all()
            )
    finally:
        storage.close()
    assert len(evidence) == TARGETS and set(evidence.values()) == {1}
    assert entries == TARGETS
    assert targets["succeeded"] + targets.get("cached", 0) == 2 * TARGETS  # every target of both runs
