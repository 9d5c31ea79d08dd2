"""farm run starts the local pool's forkserver early, with the worker's modules loaded in it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forkserver is Linux's start method")
def test_ctrl_c_while_the_forkserver_loads_prints_no_traceback_and_its_workers_still_take_ctrl_c(
    tmp_path: Path,
) -> None:
    # Ctrl-C in the first second of farm run reached the forkserver (same process group) while it
    # imported the worker modules: it printed a KeyboardInterrupt traceback under the command
    probe = (
        "import signal, sys\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from multiprocessing import forkserver\n"
        "from farm.execution.local import _init_local_worker\n"
        "from farm.execution.warmup import forkserver_context, warm_local_workers\n"
        "from farm.fleet.owners import process_owner\n"
        "from farm.settings import load_settings\n"
        "def takes_ctrl_c(): return signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "if __name__ == '__main__':\n"
        "    warm_local_workers(['catalog'])\n"
        "    print(forkserver._forkserver._forkserver_pid, flush=True)\n"
        "    sys.stdin.readline()\n"
        "    arguments = (load_settings(), process_owner())\n"
        "    context = forkserver_context()\n"
        "    with ProcessPoolExecutor(1, context, initializer=_init_local_worker, initargs=arguments) as pool:\n"
        "        print(pool.submit(takes_ctrl_c).result())\n"
    )
    script = tmp_path / "probe.py"
    script.write_text(probe)
    environment = {**os.environ, "FARM_HOME": str(tmp_path / "home")}
    probe_process = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as from a terminal
    )
    assert probe_process.stdout is not None
    server = int(probe_process.stdout.readline())
    maps = Path(f"/proc/{server}/maps")
    deadline = time.monotonic() + 60
    while "site-packages" not in maps.read_text() and time.monotonic() < deadline:
        time.sleep(0.01)  # until it imports the worker modules (about a second's work)
    os.kill(server, signal.SIGINT)
    time.sleep(2)
    stdout, stderr = probe_process.communicate("\n", timeout=120)
    assert "Traceback" not in stderr, stderr
    assert probe_process.returncode == 0
    assert stdout.strip() == "True"
