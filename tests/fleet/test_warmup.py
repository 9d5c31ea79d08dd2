"""farm run starts the local pool's forkserver early, with the worker's modules loaded in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from farm.execution.warmup import WORKER_MODULES, will_run_locally


@pytest.mark.parametrize(
    ("arguments", "environment", "local"),
    [
        (["catalog"], {}, True),
        (["catalog", "--executor", "local"], {"FARM_BROKER_URL": "redis://x"}, True),
        (["catalog", "--executor=celery"], {}, False),
        (["catalog", "--executor", "celery"], {}, False),
        (["catalog"], {"FARM_BROKER_URL": "redis://127.0.0.1:6379/0"}, False),
        (["catalog"], {"FARM_EXECUTOR": "celery"}, False),
    ],
)
def test_the_warm_up_happens_only_when_the_run_will_render_on_the_local_pool(
    arguments: list[str], environment: dict[str, str], local: bool
) -> None:
    assert will_run_locally(arguments, environment) is local


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forkserver is Linux's start method")
def test_a_local_pool_worker_starts_with_the_worker_modules_already_imported(tmp_path: Path) -> None:
    # A worker forked from the preloaded server has the modules before it runs anything: a fresh
    # interpreter asks its one worker, so this test's own imports do not count.
    probe = (
        "import sys\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from farm.execution.warmup import WORKER_MODULES, forkserver_context\n"
        "def found(): return [m for m in WORKER_MODULES if m in sys.modules]\n"
        "if __name__ == '__main__':\n"
        "    with ProcessPoolExecutor(1, mp_context=forkserver_context()) as pool:\n"
        "        print(','.join(pool.submit(found).result()))\n"
    )
    script = tmp_path / "probe.py"
    script.write_text(probe)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split(",") == list(WORKER_MODULES)


_MISSING_HANDLERS = (
    "def missing_handlers():\n"
    "    from farm.core.registry import COMPONENT_TYPES, TRAIT_TYPES\n"
    "    modules = {path.partition(':')[0] for path in [*COMPONENT_TYPES.values(), *TRAIT_TYPES.values()]}\n"
    "    return sorted(module for module in modules if module not in sys.modules)\n"
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forkserver is Linux's start method")
def test_a_local_pool_worker_starts_with_every_handler_of_the_core_loaded(tmp_path: Path) -> None:
    # its render child forks from it: the child's first renders import no handler
    probe = (
        "import sys\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from farm.execution.warmup import forkserver_context\n"
        + _MISSING_HANDLERS
        + "if __name__ == '__main__':\n"
        "    with ProcessPoolExecutor(1, mp_context=forkserver_context()) as pool:\n"
        "        print('missing:', pool.submit(missing_handlers).result())\n"
        "    print('here:', len(missing_handlers()))\n"
    )
    script = tmp_path / "probe.py"
    script.write_text(probe)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    worker, here = result.stdout.strip().splitlines()
    assert worker == "missing: []"
    assert here != "here: 0"  # the probe itself loaded none: the worker had them from the server


def test_the_celery_worker_loads_every_handler_of_the_core_before_its_pool_forks(tmp_path: Path) -> None:
    probe = "import sys\nimport workers.tasks\n" + _MISSING_HANDLERS + "print(missing_handlers())\n"
    environment = {**os.environ, "FARM_HOME": str(tmp_path), "FARM_BROKER_URL": "redis://127.0.0.1:6379/0"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=environment
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
