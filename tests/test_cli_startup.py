"""``farm build`` starts fast: it imports the core and the CLI, never the database, migration,
Celery or S3 stacks the other commands need; ``farm --help`` still lists every command, and each
command's module is imported when that command runs."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import farm.commands
from farm.cli import COMMANDS, app, load_module_commands

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "tests" / "golden" / "multi-webservices-scaler-expose"
HEAVY = {"sqlalchemy", "alembic", "celery", "kombu", "boto3", "botocore"}


def _imported_top_level(stderr: str) -> set[str]:
    """Top-level package names from ``python -X importtime`` lines (``import time: a | b | name``)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name.split(".")[0])
    return names


def _run_farm_with_importtime(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("FARM_")}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "farm", *args],
        capture_output=True,
        cwd=cwd,
        env=env,
        check=False,
    )


def test_farm_build_renders_without_importing_the_database_celery_or_s3_stacks(tmp_path: Path) -> None:
    result = _run_farm_with_importtime(
        "build", str(CASE / "app.yaml"), "--profile", str(CASE / "cluster.yaml"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert result.stdout == (CASE / "expected.yaml").read_bytes()
    imported = _imported_top_level(result.stderr.decode())
    assert "farm" in imported
    assert imported & HEAVY == set()
    assert "farm.daemon" not in result.stderr.decode()  # only run and plan look for a daemon


def test_the_import_check_sees_the_storage_stack_a_storage_command_imports(tmp_path: Path) -> None:
    result = _run_farm_with_importtime("db", "upgrade", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert {"sqlalchemy", "alembic"} <= _imported_top_level(result.stderr.decode())


def _main_process_modules(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """Run ``farm ARGS`` and list the modules its own process imported (not those of the local
    pool's forkserver, which ``farm run`` starts early to preload the workers' modules)."""
    modules = cwd / "modules.txt"
    probe = (
        "import atexit, runpy, sys\n"
        f"atexit.register(lambda: open({str(modules)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        f"sys.argv = ['farm', *{list(args)!r}]\n"
        "runpy.run_module('farm', run_name='__main__', alter_sys=True)\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("FARM_")}
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, cwd=cwd, env=env, check=False)
    return result, set(modules.read_text().splitlines())


def test_a_no_change_farm_run_imports_neither_alembic_nor_the_executors_nor_celery(tmp_path: Path) -> None:
    catalog = ROOT / "examples" / "fleet"
    first, imported = _main_process_modules("run", str(catalog), "--json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr.decode()[-2000:]
    assert "alembic" in imported  # the embedded database is created
    again, imported = _main_process_modules("run", str(catalog), "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr.decode()[-2000:]
    assert b'"succeeded": 0' in again.stdout and b'"queued": 0' in again.stdout
    top_level = {name.split(".")[0] for name in imported}
    assert top_level & {"alembic", "celery", "kombu", "boto3", "cryptography"} == set()
    assert "farm.execution.local" not in imported


def test_farm_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    listed = {line.strip("│ ").split(" ")[0] for line in result.output.splitlines() if line.startswith("│ ")}
    assert set(COMMANDS) <= listed


def _command_modules() -> list[str]:
    return sorted(
        info.name for info in pkgutil.iter_modules(farm.commands.__path__) if not info.name.startswith("_")
    )


def test_every_command_a_module_registers_is_in_the_lazy_table_and_nothing_else() -> None:
    registered = {}
    for module in _command_modules():
        for name in load_module_commands(module):
            registered[name] = module
    assert registered == COMMANDS


def test_a_lazily_loaded_command_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["keys", "generate", "--out", str(tmp_path / "keys")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "keys" / "signing.key").is_file()
    assert "keyid:" in result.output


def test_a_mistyped_command_is_refused_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["bild"])
    assert result.exit_code == 2
    assert "No such command 'bild'. Did you mean 'build'?" in result.output


def test_farm_run_and_plan_leave_without_the_interpreter_teardown_yet_run_exit_handlers_and_keep_their_status(
    tmp_path: Path,
) -> None:
    """``farm run`` and ``farm plan`` end with ``os._exit`` after their exit handlers: an exit
    handler still writes, a finalizer of the teardown does not run, the JSON summary is whole, a
    failure still exits 1 with its one ``Error:`` line, and a plan with work still exits 2."""

    def farm(*args: str) -> subprocess.CompletedProcess[bytes]:
        probe = (
            "import atexit, runpy, sys\n"
            "class TornDown:\n"
            f"    def __del__(self): open({str(tmp_path / 'torn-down')!r}, 'w').close()\n"
            "marker = TornDown()\n"
            f"atexit.register(lambda: open({str(tmp_path / 'handled')!r}, 'w').close())\n"
            f"sys.argv = ['farm', *{list(args)!r}]\n"
            "runpy.run_module('farm', run_name='__main__', alter_sys=True)\n"
        )
        env = {key: value for key, value in os.environ.items() if not key.startswith("FARM_")}
        return subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, cwd=tmp_path, env=env, check=False
        )

    def handled_without_teardown() -> bool:
        handled = (tmp_path / "handled").exists() and not (tmp_path / "torn-down").exists()
        (tmp_path / "handled").unlink(missing_ok=True)
        return handled

    planned = farm("plan", str(ROOT / "examples" / "fleet"), "--json")
    assert planned.returncode == 2, planned.stderr.decode()[-2000:]
    assert json.loads(planned.stdout)["render"] == 31
    assert handled_without_teardown()
    done = farm("run", str(ROOT / "examples" / "fleet"), "--json")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert json.loads(done.stdout)["counts"]["succeeded"] == 31
    assert handled_without_teardown()
    failed = farm("run", str(tmp_path / "no-such-catalog"))
    assert failed.returncode == 1
    assert failed.stderr.decode().count("Error: ") == 1 and "Traceback" not in failed.stderr.decode()
    assert handled_without_teardown()


def test_farm_run_leaves_no_write_ahead_log_behind_so_the_log_never_grows_from_run_to_run(
    tmp_path: Path,
) -> None:
    """``farm run`` leaves with ``os._exit``, yet closes its SQLite connections first: the last
    one checkpoints the write-ahead log into the database and removes it. Left open, the next
    process could not restart the log and appended every run's writes to it."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FARM_")}
    catalog = str(ROOT / "examples" / "fleet")
    database = tmp_path / ".farm" / "farm.db"
    for expected in ("succeeded", "cached"):
        done = subprocess.run(
            [sys.executable, "-m", "farm", "run", catalog, "--json"],
            capture_output=True,
            cwd=tmp_path,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        assert json.loads(done.stdout)["counts"][expected] == 31
        assert database.is_file()
        assert not Path(f"{database}-wal").exists()


def test_the_daemon_client_imports_neither_the_socket_module_nor_hashlib_nor_json_nor_re() -> None:
    """``farm run`` handed to a daemon imports only the client and its wire format: the
    ``socket`` module, ``hashlib`` (OpenSSL), ``json`` with ``re``, and ``typing`` cost a seventh
    of a small no-change run (docs/performance.md), and the client works without them."""
    probe = (
        "import sys, farm.daemon.client\n"
        "print(sorted(m for m in ('socket', 'hashlib', 'json', 're', 'typing', 'pathlib', 'farm.settings')"
        " if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", result.stdout
