"""The farm daemon: ``farm run`` handed to a resident process per FARM_HOME, and every way the
client still gets the outcome it would get by itself."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import select

from farm.daemon import protocol
from farm.daemon.server import ask
from farm.evidence.keys import generate_key_pair
from farm.settings import load_settings
from farm.store import models
from farm.store.context import open_storage
from farm.store.db import read_scope

from .conftest import Catalog, FleetEnv, make_catalog
from .test_bounded_renders import write_heavy_app

pytestmark = pytest.mark.timeout(240)

FARM = [sys.executable, "-m", "farm"]
ROOT = Path(__file__).resolve().parents[2]


def _base_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}


@dataclass
class Farm:
    """A FARM_HOME, the environment its daemon and clients share, and a folder to run them in."""

    home: Path
    cwd: Path
    env: dict[str, str]
    started: list[int] = field(default_factory=list)

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*FARM, *args], env=env or self.env, cwd=self.cwd, capture_output=True, text=True, timeout=180
        )

    def start(self, *extra: str, env: dict[str, str] | None = None) -> int:
        result = self("daemon", "start", "--idle", "300", *extra, env=env)
        assert result.returncode == 0, result.stderr
        status = self.status()
        assert status is not None
        self.started.append(int(status["pid"]))
        return int(status["pid"])

    def status(self) -> dict | None:
        return ask(self.home / protocol.SOCKET_NAME, {"op": "status"})

    def served(self) -> int:
        status = self.status()
        assert status is not None, "the daemon is not running"
        return int(status["served"])

    def log(self) -> str:
        return (self.home / protocol.LOG_NAME).read_text()

    def command_request(self, *, cwd: Path | None = None, fingerprint: str | None = None) -> dict:
        """What ``farm run catalog`` sends the daemon, spoken here over the protocol directly."""
        return {
            "op": "command",
            "argv": ["run", "catalog"],
            "cwd": str(cwd or self.cwd),
            "env": self.env,
            "fingerprint": fingerprint or protocol.code_fingerprint(),
        }

    def run_json(self, catalog: Path | str, env: dict[str, str] | None = None) -> dict:
        result = self("run", str(catalog), "--json", env=env)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def _gone(pid: int, within: float = 60.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _process_exists(pid):
            return True
        time.sleep(0.05)
    return False


def _process_exists(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _farm(home: Path, cwd: Path, extra: dict[str, str] | None = None) -> Iterator[Farm]:
    cwd.mkdir(parents=True, exist_ok=True)
    farm = Farm(home, cwd, {**_base_environment(), "FARM_HOME": str(home), **(extra or {})})
    yield farm
    farm("daemon", "stop")
    for pid in farm.started:
        if not _gone(pid, within=30):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def farm(tmp_path: Path) -> Iterator[Farm]:
    """The embedded default (SQLite, local objects) under a home of its own."""
    yield from _farm(tmp_path / "home", tmp_path / "work")


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return make_catalog(tmp_path / "work" / "catalog")


def _counts(summary: dict) -> tuple[int, int, int]:
    counts = summary["counts"]
    return counts["succeeded"], counts["cached"], counts["failed"]


def test_farm_run_through_the_daemon_renders_signs_and_caches_like_a_run_of_its_own(
    tmp_path: Path, fleet_env: FleetEnv, catalog: Catalog
) -> None:
    # on both databases: the daemon's workers record into the client's database
    for farm in _farm(fleet_env.settings.home, tmp_path / "work", fleet_env.environ()):
        farm.start()
        first = farm.run_json("catalog")  # relative to the client's folder, not the daemon's
        assert first["state"] == "completed"
        assert _counts(first) == (11, 0, 0)
        assert farm.served() == 1
        again = farm.run_json("catalog")
        assert _counts(again) == (0, 11, 0)
        assert farm.served() == 2
        verified = farm("verify", "--all")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert verified.stdout.endswith(
            "4 output(s) checked, 0 failure(s)\n"
        )  # 11 targets, 4 distinct outputs
        by_itself = farm.run_json("catalog", env={**farm.env, "FARM_DAEMON": "off"})
        assert _counts(by_itself) == (0, 11, 0)
        assert farm.served() == 2
        assert "FARM_DAEMON" not in farm.log()  # it never asked: no refusal was logged


def test_farm_plan_through_the_daemon_prints_what_it_prints_in_its_own_process(
    farm: Farm, catalog: Catalog
) -> None:
    farm.start()
    assert _counts(farm.run_json("catalog")) == (11, 0, 0)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    served = farm("plan", "catalog")
    by_itself = farm("plan", "catalog", env={**farm.env, "FARM_DAEMON": "off"})
    assert farm.served() == 2
    assert served.returncode == by_itself.returncode == 2  # something would render: the CI gate's status
    assert served.stdout == by_itself.stdout
    assert "would render 3 of 11 targets" in served.stdout
    assert served.stderr == by_itself.stderr == ""


def test_the_daemon_relays_a_failing_command_s_error_line_and_exit_status(farm: Farm) -> None:
    farm.start()
    result = farm("run", "no-such-catalog")
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1
    assert "no-such-catalog" in result.stderr
    assert result.stdout == ""
    assert farm.served() == 1
    usage = farm("run", "catalog", "--executor", "lcoal")
    assert usage.returncode == 2
    assert usage.stderr == "Error: --executor: must be local or celery, got 'lcoal'\n"


def _another_name_of_this_interpreter() -> Path:
    """A sibling of ``sys.executable`` (a venv's ``python`` and ``python3``) that is the same
    interpreter under another name, as the ``farm`` script's first line names it."""
    here = Path(sys.executable)
    for name in ("python3", "python", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
        sibling = here.with_name(name)
        if name != here.name and sibling.exists() and sibling.resolve() == here.resolve():
            return sibling
    pytest.fail(f"no other name of {here} next to it")


def test_a_client_started_through_another_name_of_the_same_interpreter_is_served(
    farm: Farm, catalog: Catalog
) -> None:
    pid = farm.start()  # as ``python -m farm daemon start``; then ``farm run`` (python3, say)
    alias = _another_name_of_this_interpreter()
    result = subprocess.run(
        [str(alias), "-m", "farm", "run", "catalog", "--json"],
        env=farm.env,
        cwd=farm.cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert _counts(json.loads(result.stdout)) == (11, 0, 0)
    assert farm.served() == 1
    assert farm.status() is not None and _process_exists(pid)
    assert "other farm code" not in farm.log()


def test_a_client_in_a_removed_folder_gets_one_error_line_and_the_daemon_serves_on(
    farm: Farm, catalog: Catalog, tmp_path: Path
) -> None:
    farm.start()
    removed = tmp_path / "removed"
    removed.mkdir()
    result = subprocess.run(
        [*FARM, "run", "catalog"],
        env=farm.env,
        cwd=removed,
        preexec_fn=lambda: os.rmdir(removed),  # in the child, once it is in the folder
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("Error: the current folder no longer exists"), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert farm.served() == 0
    assert _counts(farm.run_json("catalog")) == (11, 0, 0)
    assert farm.served() == 1


def _runs_in_the_database_file(home: Path, tmp_path: Path) -> set[str]:
    """The runs the database file itself holds (its write-ahead log left out: what was
    checkpointed into it)."""
    alone = tmp_path / "farm-alone.db"
    shutil.copyfile(home / "farm.db", alone)
    with closing(sqlite3.connect(alone)) as database:
        return {run_id for (run_id,) in database.execute("SELECT id FROM fleet_runs")}


def test_the_daemon_checkpoints_a_command_s_writes_into_the_database_once_it_has_answered(
    farm: Farm, catalog: Catalog, tmp_path: Path
) -> None:
    farm.start()
    farm.run_json("catalog")
    again = farm.run_json("catalog")  # planned and copied by the daemon alone: no worker wrote
    assert _counts(again) == (0, 11, 0)
    deadline = time.monotonic() + 60
    while again["run_id"] not in _runs_in_the_database_file(farm.home, tmp_path):
        assert time.monotonic() < deadline, "the re-run's rows stayed in the write-ahead log"
        time.sleep(0.1)
    assert farm.served() == 2


def test_a_client_with_another_environment_runs_the_command_itself(farm: Farm, catalog: Catalog) -> None:
    farm.start()
    summary = farm.run_json("catalog", env={**farm.env, "FARM_BATCH_SIZE": "2"})
    assert _counts(summary) == (11, 0, 0)
    assert farm.served() == 0
    assert "the client's environment differs from the daemon's (FARM_BATCH_SIZE)" in farm.log()
    assert _batch_sizes(farm.home, summary["run_id"]) == [2, 2, 2, 2, 1, 1, 1]  # the client's batch size


def _batch_sizes(home: Path, run_id: str) -> list[int]:
    storage = open_storage(load_settings(home=home))
    with read_scope(storage.sessions) as session:
        job_ids = session.scalars(
            select(models.RenderTarget.job_id).where(models.RenderTarget.run_id == run_id)
        ).all()
    storage.close()
    return sorted((job_ids.count(job) for job in set(job_ids)), reverse=True)


def test_a_client_that_finds_the_daemon_busy_runs_the_command_itself(farm: Farm, tmp_path: Path) -> None:
    slow = make_catalog(farm.cwd / "slow", apps=1)
    write_heavy_app(slow)  # seconds of rendering per target: the daemon stays busy
    quick = make_catalog(farm.cwd / "quick")
    farm.start()
    first = subprocess.Popen(
        [*FARM, "run", "slow", "--json"], env=farm.env, cwd=farm.cwd, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not (farm.status() or {}).get("busy") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (farm.status() or {}).get("busy"), "the daemon never took the slow run"
        second = farm.run_json(quick.root.name)
        rendered, cached, failed = _counts(second)  # app-0 may be cached from the slow run
        assert (rendered + cached, failed) == (11, 0)
        assert "refused ['run', 'quick', '--json']: busy with another command" in farm.log()
    finally:
        stdout, _ = first.communicate(timeout=180)
    assert first.returncode == 0
    assert _counts(json.loads(stdout)) == (5, 0, 0)
    assert farm.served() == 1


def test_variables_a_shell_changes_between_commands_do_not_count_as_another_environment() -> None:
    mine = {"PATH": "/bin", "FARM_HOME": "/h", "_": "/usr/bin/farm", "PWD": "/a", "SHLVL": "1"}
    theirs = {
        "PATH": "/bin",
        "FARM_HOME": "/h",
        "_": "/bin/env",
        "PWD": "/b",
        "OLDPWD": "/a",
        "COLUMNS": "80",
    }
    assert (
        protocol.first_difference(
            protocol.comparable_environment(mine), protocol.comparable_environment(theirs)
        )
        is None
    )
    theirs["FARM_OBJECT_STORE"] = "s3://other"
    assert (
        protocol.first_difference(
            protocol.comparable_environment(mine), protocol.comparable_environment(theirs)
        )
        == "FARM_OBJECT_STORE"
    )


def test_a_daemon_asked_by_a_client_with_other_farm_code_refuses_and_stops(farm: Farm) -> None:
    pid = farm.start()
    request = farm.command_request(fingerprint="0" * 64)
    with closing(protocol.connect(farm.home / protocol.SOCKET_NAME, timeout=30)) as connection:
        protocol.send_json(connection, protocol.REQUEST, request)
        kind, payload = protocol.receive_frame(connection) or (b"", b"")
    assert kind == protocol.REFUSED
    assert "other farm code" in json.loads(payload)["reason"]
    assert _gone(pid)
    assert not (farm.home / protocol.SOCKET_NAME).exists()
    assert "stopped: a client runs other farm code" in farm.log()


def test_a_client_that_goes_away_interrupts_its_command_and_the_daemon_serves_the_next(
    farm: Farm, catalog: Catalog
) -> None:
    farm.start()
    request = farm.command_request()
    with closing(protocol.connect(farm.home / protocol.SOCKET_NAME, timeout=30)) as connection:
        protocol.send_json(connection, protocol.REQUEST, request)
        frame = protocol.receive_frame(connection)
        assert frame is not None and frame[0] == protocol.ACCEPTED
    # gone as soon as the command started: the daemon interrupts it, then serves the next client
    deadline = time.monotonic() + 60
    while "farm run catalog in" not in farm.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "the client went away: its command is interrupted" in farm.log()
    assert "exit 130" in farm.log()
    summary = farm.run_json("catalog")
    assert summary["state"] == "completed"
    assert sum(_counts(summary)) == 11
    assert farm.served() == 2


def test_a_run_interrupted_by_ctrl_c_on_its_client_reads_interrupted_and_the_next_run_finishes_it(
    farm: Farm, tmp_path: Path
) -> None:
    # the daemon lives on after the command: the run it owned read "running" for as long as it lived
    slow = make_catalog(farm.cwd / "slow", apps=1)
    write_heavy_app(slow)  # seconds of rendering per target: Ctrl-C lands mid-run
    farm.start()
    client = subprocess.Popen(
        [*FARM, "run", "slow"], env=farm.env, cwd=farm.cwd, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not _runs(farm) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _runs(farm), "the daemon never began the run"
    finally:
        client.send_signal(signal.SIGINT)
        client.communicate(timeout=60)
    assert client.returncode == 130
    deadline = time.monotonic() + 60
    while "farm run slow in" not in farm.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "exit 130" in farm.log()
    (interrupted,) = _runs(farm)
    assert interrupted["state"] == "interrupted"
    again = farm("run", "slow", "--json")
    assert again.returncode == 0, again.stderr
    assert f"warning: run {interrupted['id']} was interrupted" in again.stderr
    states = {run["id"]: run["state"] for run in _runs(farm)}
    assert states == {interrupted["id"]: "completed", json.loads(again.stdout)["run_id"]: "completed"}


def _runs(farm: Farm) -> list[dict]:
    listed = farm("runs", "--json")
    return [json.loads(line) for line in listed.stdout.splitlines()]


def test_stop_ends_the_daemon_and_later_runs_render_in_their_own_process(
    farm: Farm, catalog: Catalog
) -> None:
    pid = farm.start()
    stopped = farm("daemon", "stop")
    assert stopped.returncode == 0
    assert stopped.stdout == f"farm daemon stopped (pid {pid})\n"
    assert not _process_exists(pid)
    assert not (farm.home / protocol.SOCKET_NAME).exists()
    status = farm("daemon", "status")
    assert status.returncode == 3
    assert status.stdout == f"no farm daemon runs for {farm.home}\n"
    as_json = farm("daemon", "status", "--json")
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout) == {"running": False, "home": str(farm.home)}
    assert _counts(farm.run_json("catalog")) == (11, 0, 0)
    again = farm("daemon", "stop")
    assert (again.returncode, again.stdout) == (0, f"no farm daemon runs for {farm.home}\n")


def test_a_second_start_reports_the_daemon_already_running(farm: Farm) -> None:
    pid = farm.start()
    second = farm("daemon", "start")
    assert second.returncode == 0
    assert second.stdout == f"farm daemon already running for {farm.home} (pid {pid})\n"
    status = farm("daemon", "status")
    assert status.returncode == 0
    assert status.stdout.startswith(f"farm daemon pid {pid} serves {farm.home}: up ")
    assert "0 commands served" in status.stdout
    assert " MiB resident; idle timeout 300 s" in status.stdout
    as_json = json.loads(farm("daemon", "status", "--json").stdout)
    assert as_json["running"] is True and as_json["pid"] == pid and as_json["served"] == 0
    assert as_json["same_code"] is True and as_json["rss_mib"] > 0
    assert as_json["log"] == str(farm.home / protocol.LOG_NAME)


def test_start_replaces_a_daemon_that_runs_other_farm_code(farm: Farm, tmp_path: Path) -> None:
    # a daemon of another install: the farm package copied elsewhere, first on its import path
    source = tmp_path / "other-release"
    shutil.copytree(ROOT / "farm", source / "farm", ignore=shutil.ignore_patterns("__pycache__"))
    old = farm.start(env={**farm.env, "PYTHONPATH": str(source)})
    status = farm.status()
    assert status is not None and not status["same_code"]
    started = farm("daemon", "start", "--idle", "300")
    assert started.returncode == 0, started.stderr
    assert started.stdout.startswith(
        f"farm daemon pid {old} ran other farm code: stopped\nfarm daemon started for "
    )
    assert not _process_exists(old)
    status = farm.status()
    assert status is not None and status["same_code"] and status["pid"] != old
    farm.started.append(int(status["pid"]))


def test_the_code_fingerprint_changes_with_an_edited_module_and_not_with_bytecode(tmp_path: Path) -> None:
    source = tmp_path / "release"
    shutil.copytree(ROOT / "farm", source / "farm", ignore=shutil.ignore_patterns("__pycache__"))

    def fingerprint() -> str:
        return subprocess.run(
            [sys.executable, "-c", "from farm.daemon import protocol; print(protocol.code_fingerprint())"],
            env={**_base_environment(), "PYTHONPATH": str(source), "PYTHONDONTWRITEBYTECODE": "1"},
            cwd=tmp_path,  # ``-c`` puts its folder first on the import path
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.strip()

    first = fingerprint()
    assert fingerprint() == first
    cache = source / "farm" / "core" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "render.cpython-311.pyc").write_bytes(b"bytecode")
    assert fingerprint() == first  # bytecode caches come and go
    module = source / "farm" / "core" / "render.py"
    module.write_text(module.read_text() + "# edited\n")
    edited = fingerprint()
    assert edited != first
    (source / "farm" / "core" / "components" / "new_handler.py").write_text("")
    assert fingerprint() not in (first, edited)  # a new file in a nested package


def test_a_daemon_whose_socket_is_removed_stops_itself(farm: Farm) -> None:
    pid = farm.start()
    (farm.home / protocol.SOCKET_NAME).unlink()
    assert _gone(pid)
    assert "stopped: its socket" in farm.log()


def test_a_daemon_stops_after_its_idle_timeout(farm: Farm) -> None:
    result = farm("daemon", "start", "--idle", "1")
    assert result.returncode == 0, result.stderr
    # the pid start printed, not a status query: on a loaded machine the daemon may idle out
    # before another command reaches it
    pid = int(result.stdout.rsplit("(pid ", 1)[1].split(")")[0])
    assert _gone(pid)
    assert "stopped: no command in 1 s" in farm.log()


def test_a_daemon_start_with_a_bad_setting_is_one_error_line_naming_it(farm: Farm) -> None:
    result = farm("daemon", "start", env={**farm.env, "FARM_BATCH_SIZE": "many"})
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1
    assert "FARM_BATCH_SIZE" in result.stderr
    assert farm.status() is None


def test_a_daemon_start_with_a_missing_signing_key_is_one_error_line_naming_the_file(
    farm: Farm, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such.key"
    result = farm("daemon", "start", env={**farm.env, "FARM_SIGNING_KEY": str(missing)})
    assert result.returncode == 1
    assert result.stderr.startswith("Error: the farm daemon did not start: ")
    assert result.stderr.count("\n") == 1
    assert str(missing) in result.stderr
    assert "Traceback" not in farm.log()
    assert farm.status() is None


def test_a_run_after_the_signing_key_is_replaced_by_another_trusted_key_signs_with_the_new_key(
    tmp_path: Path, catalog: Catalog
) -> None:
    old = generate_key_pair(tmp_path / "old")
    new = generate_key_pair(tmp_path / "new")
    key = tmp_path / "signing.key"
    key.write_bytes(old.private_key.read_bytes())
    trusted = tmp_path / "trusted_signers"  # a run refuses to sign with a key not trusted
    trusted.write_text(old.public_key.read_text() + new.public_key.read_text())
    configured = {"FARM_SIGNING_KEY": str(key), "FARM_TRUSTED_SIGNERS": str(trusted)}
    for farm in _farm(tmp_path / "home", tmp_path / "work", configured):
        farm.start()
        assert _counts(farm.run_json("catalog")) == (11, 0, 0)
        key.write_bytes(new.private_key.read_bytes())
        catalog.write_app("app-9")  # a new application: three targets to render
        assert _counts(farm.run_json("catalog")) == (3, 11, 0)
        assert farm.served() == 2
        storage = open_storage(load_settings(home=farm.home))
        with read_scope(storage.sessions) as session:
            keyids = session.scalars(select(models.EvidenceRecord.signer_keyid)).all()
        storage.close()
        assert sorted(keyids) == sorted([old.keyid] * 11 + [new.keyid] * 3)


def test_a_run_the_daemon_serves_imports_only_the_standard_library_and_the_daemon_client(
    farm: Farm, catalog: Catalog
) -> None:
    farm.start()
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "farm", "run", "catalog", "--json"],
        env=farm.env,
        cwd=farm.cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert _counts(json.loads(result.stdout)) == (11, 0, 0)
    assert farm.served() == 1
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    } - {"imported package"}  # the header line
    assert {name for name in imported if name.split(".")[0] == "farm"} == {
        "farm",
        "farm.launcher",
        "farm.daemon",
        "farm.daemon.client",
        "farm.daemon.protocol",
    }
    third_party = {
        name.split(".")[0]
        for name in imported
        if name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] != "farm"
    }
    assert {name for name in third_party if not name.startswith(("__editable__", "_virtualenv"))} <= {
        "sitecustomize",
        "_distutils_hack",
    }
    assert not imported & {"socket", "hashlib", "json", "re", "typing"}  # protocol.py says why


@pytest.mark.parametrize(
    "value",
    [
        {"argv": ["run", "catalog", "--json"], "cwd": "/w/é", "columns": None, "count": -3},
        {"env": {"A": 'quote " back \\ slash', "B": "tab\tnew\nline\u0001", "C": "naïve ✓ 𝄞"}},
        {"env": {"UNDECODABLE": "\udcff\udc80"}, "tty": {"stdout": True, "stderr": False}},
        {"nested": [[], {}, [None, True, 0]], "": ""},
    ],
)
def test_a_request_is_written_as_json_dumps_writes_it(value: dict) -> None:
    assert protocol.encode_json(value) == json.dumps(value)
    assert json.loads(protocol.encode_json(value)) == value


def test_a_request_holding_another_type_is_refused() -> None:
    for bad in ({"x": 1.5}, {"x": {1: "a"}}, {"x": b"bytes"}):
        with pytest.raises(TypeError):
            protocol.encode_json(bad)


@pytest.mark.parametrize("code", [0, 1, 2, 130, -9])
def test_an_exit_code_reads_back_as_it_was_sent(code: int) -> None:
    payload = protocol.exit_payload(code)
    assert json.loads(payload) == {"code": code}
    assert protocol.exit_code(payload) == code


@pytest.mark.parametrize(
    "payload",
    [b"", b"{}", b'{"code": }', b'{"code": 1, "x": 2}', b'{"code": "1"}', b'{"code": --9}', b'{"code": -}'],
)
def test_an_exit_frame_without_a_code_is_a_protocol_error(payload: bytes) -> None:
    with pytest.raises(protocol.ProtocolError):
        protocol.exit_code(payload)


def test_a_command_the_daemon_cannot_set_up_fails_with_one_error_line_and_the_daemon_serves_on(
    farm: Farm, catalog: Catalog
) -> None:
    farm.start()
    request = farm.command_request(cwd=farm.cwd / "gone")  # a folder the daemon cannot enter
    frames = []
    with closing(protocol.connect(farm.home / protocol.SOCKET_NAME, timeout=60)) as connection:
        protocol.send_json(connection, protocol.REQUEST, request)
        while (frame := protocol.receive_frame(connection)) is not None:
            frames.append(frame)
    assert [kind for kind, _ in frames] == [protocol.ACCEPTED, protocol.STDERR, protocol.EXIT]
    message = frames[1][1].decode()
    assert message.startswith("Error: the farm daemon could not run the command (FileNotFoundError")
    assert message.count("\n") == 1
    assert json.loads(frames[2][1]) == {"code": 1}
    assert _counts(farm.run_json("catalog")) == (11, 0, 0)
    assert farm.served() == 2


def test_a_reader_that_closes_the_output_early_gets_no_error_from_the_client(
    farm: Farm, catalog: Catalog
) -> None:
    farm.start()
    read_end, write_end = os.pipe()
    os.close(read_end)  # farm run | head -0: nobody reads what the command prints
    try:
        result = subprocess.run(
            [*FARM, "run", "catalog", "--json"],
            env=farm.env,
            cwd=farm.cwd,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=180,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0
    assert result.stderr == ""
    assert farm.served() == 1
