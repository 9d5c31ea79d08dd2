"""Expected failures of the storage and fleet commands are one ``Error:`` line naming the service
and the setting to check; never a traceback, never a password. Files the farm writes are private."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from conftest_store import DatabaseFactory, Fleet
from sqlalchemy.exc import OperationalError
from stored_blobs import remove_blob

from farm.commands._errors import describe
from farm.settings import SettingsError, redact_url
from farm.store.db import create_farm_engine
from farm.store.models import RenderJob, utcnow
from farm.store.objects import SMALL_BLOB_BYTES, LocalObjectStore

SECRET = "s3cret-Pa55"
ROOT = Path(__file__).resolve().parent.parent


def farm(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    clean.update(env or {})
    clean["AWS_MAX_ATTEMPTS"] = "1"  # an unreachable endpoint fails at once, not after retries
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], env=clean, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def single_error(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``Error:`` line of a failed command (exit 1, no traceback, no password)."""
    assert "Traceback" not in result.stderr, result.stderr
    assert SECRET not in result.stderr + result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    assert result.returncode == 1, result.stderr
    return errors[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def embedded(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"FARM_HOME": str(tmp_path / ".farm"), **extra}


# --- Settings and URLs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://farm:pw@db/farm", "postgresql://farm:***@db/farm"),
        ("mysql://root:p@ss:w@rd@db:5432/x?a=b", "mysql://root:***@db:5432/x?a=b"),
        ("redis://:pw@redis:6379/0", "redis://:***@redis:6379/0"),
        ("redis://redis:6379/0", "redis://redis:6379/0"),
        ("sqlite:////tmp/farm.db", "sqlite:////tmp/farm.db"),
    ],
)
def test_a_url_is_shown_with_its_password_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_an_unsupported_database_url_is_refused_without_echoing_its_password(tmp_path: Path) -> None:
    result = farm("runs", env=embedded(tmp_path, FARM_DATABASE_URL=f"mysql://root:{SECRET}@db/x"))
    assert single_error(result) == (
        "Error: FARM_DATABASE_URL: only sqlite and postgresql are supported, got 'mysql://root:***@db/x'"
    )


def test_a_database_url_that_does_not_parse_is_refused_without_echoing_it(tmp_path: Path) -> None:
    result = farm("gc", "--dry-run", env=embedded(tmp_path, FARM_DATABASE_URL=f"not a url {SECRET}"))
    assert single_error(result).startswith("Error: FARM_DATABASE_URL: not a database URL")


# --- Services unreachable or unprepared ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_database_without_the_schema_says_run_farm_db_upgrade(
    kind: str, databases: DatabaseFactory, tmp_path: Path
) -> None:
    url = databases.empty(kind)
    result = farm("verify", "--all", env=embedded(tmp_path, FARM_DATABASE_URL=url))
    line = single_error(result)
    if kind == "sqlite":  # no file yet: nothing is created for a command that only reads
        assert "no farm database at" in line and "`farm db upgrade` first" in line
    else:
        assert "has no farm schema or an older one: run farm db upgrade" in line
    assert "FARM_DATABASE_URL" in line


def test_farm_runs_on_a_postgresql_database_never_upgraded_says_run_farm_db_upgrade(
    databases: DatabaseFactory, tmp_path: Path
) -> None:
    result = farm("runs", env=embedded(tmp_path, FARM_DATABASE_URL=databases.empty("postgresql")))
    assert "run farm db upgrade" in single_error(result)


def test_an_unreachable_database_is_named_with_its_setting_and_no_password(tmp_path: Path) -> None:
    url = f"postgresql://farm:{SECRET}@127.0.0.1:{free_port()}/farm"
    result = farm("runs", env=embedded(tmp_path, FARM_DATABASE_URL=url))
    line = single_error(result)
    assert line.startswith("Error: database unreachable at postgresql://farm:***@127.0.0.1:")
    assert line.endswith("(check FARM_DATABASE_URL and that the server runs)")


def test_a_sqlite_file_that_cannot_be_opened_is_not_called_an_unreachable_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a read-only home: "database unreachable at sqlite:///…: unable to open database file (check
    # FARM_DATABASE_URL and that the server runs)"; a read-only mount needs privileges, so the
    # file system's answer is stood in for here
    home = tmp_path / "home"
    home.mkdir()
    (home / "farm.db").write_bytes(b"")
    monkeypatch.setenv("FARM_HOME", str(home))
    monkeypatch.delenv("FARM_DATABASE_URL", raising=False)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    refused = OperationalError("SELECT 1", {}, sqlite3.OperationalError("unable to open database file"))
    assert describe(refused) == (
        f"the database file {home / 'farm.db'} cannot be opened: it or its folder is not writable"
        " (a read-only file system, or their permissions) (FARM_HOME or FARM_DATABASE_URL names it)"
    )


def test_an_unreachable_s3_endpoint_names_the_store_and_its_settings(
    farm_env: dict[str, str], tmp_path: Path
) -> None:
    env = farm_env | {
        "FARM_OBJECT_STORE": "s3://farm-outputs",
        "FARM_S3_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "AWS_ACCESS_KEY_ID": "farm-test",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    line = single_error(farm("gc", "--dry-run", env=env))
    assert line.startswith("Error: object store s3://farm-outputs: Could not connect to the endpoint URL")
    assert "FARM_S3_ENDPOINT_URL" in line


def test_an_s3_failure_with_farm_credentials_never_shows_the_secret_access_key(
    farm_env: dict[str, str], tmp_path: Path
) -> None:
    env = farm_env | {
        "FARM_OBJECT_STORE": "s3://farm-outputs",
        "FARM_S3_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "FARM_S3_REGION": "us-east-1",
        "FARM_S3_ACCESS_KEY_ID": "farm-test",
        "FARM_S3_SECRET_ACCESS_KEY": SECRET,
    }
    line = single_error(farm("gc", "--dry-run", env=env))  # single_error: the secret is in neither stream
    assert line.startswith("Error: object store s3://farm-outputs: Could not connect to the endpoint URL")
    assert "FARM_S3_ACCESS_KEY_ID/FARM_S3_SECRET_ACCESS_KEY" in line


def test_an_s3_secret_without_its_access_key_id_is_refused_without_echoing_it(
    farm_env: dict[str, str],
) -> None:
    env = farm_env | {"FARM_OBJECT_STORE": "s3://farm-outputs", "FARM_S3_SECRET_ACCESS_KEY": SECRET}
    line = single_error(farm("runs", env=env))
    assert line == (
        "Error: invalid farm settings: FARM_S3_ACCESS_KEY_ID and FARM_S3_SECRET_ACCESS_KEY go together: "
        "set both, or neither for boto3's own credentials (AWS_ACCESS_KEY_ID, profiles, roles)"
    )


def test_a_missing_signing_key_names_the_file_and_the_setting(
    farm_env: dict[str, str], tmp_path: Path
) -> None:
    env = farm_env | {"FARM_SIGNING_KEY": str(tmp_path / "absent.key")}
    line = single_error(farm("run", str(ROOT / "examples" / "fleet"), env=env))
    assert line == (
        f"Error: {tmp_path / 'absent.key'}: signing key file not found "
        "(FARM_SIGNING_KEY names the key; farm keys generate writes one)"
    )


@pytest.mark.parametrize("command", ["worker", "beat", "reconcile"])
def test_celery_commands_without_a_broker_refuse_naming_farm_broker_url(command: str, tmp_path: Path) -> None:
    line = single_error(farm(command, env=embedded(tmp_path)))
    assert line.startswith("Error: FARM_BROKER_URL is not set:")


def test_the_celery_application_has_no_default_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARM_BROKER_URL", "redis://127.0.0.1:6379/0")
    from workers.celery_app import make_celery

    monkeypatch.delenv("FARM_BROKER_URL")
    with pytest.raises(SettingsError, match="FARM_BROKER_URL is not set"):
        make_celery()


def test_reconcile_with_an_unreachable_broker_names_it_without_its_password(
    farm_env: dict[str, str], cli_fleet: Fleet
) -> None:
    from conftest_store import make_inputs

    job_id, _ = cli_fleet.new_job(cli_fleet.new_run(), (make_inputs(), "web", "prod"))
    with cli_fleet.sessions.begin() as session:  # queued an hour ago: lost, to be sent again
        session.get(RenderJob, job_id).queued_at = utcnow() - timedelta(hours=1)
    broker = f"redis://:{SECRET}@127.0.0.1:{free_port()}/0"
    line = single_error(farm("reconcile", "--timeout", "0", env=farm_env | {"FARM_BROKER_URL": broker}))
    assert line.startswith("Error: broker unreachable at redis://:***@127.0.0.1:")
    assert "FARM_BROKER_URL" in line


# --- Arguments and missing data ------------------------------------------------------------------


def test_farm_output_of_a_deleted_blob_names_the_blob(farm_env: dict[str, str], cli_fleet: Fleet) -> None:
    _, _, record = cli_fleet.render(b"kind: ConfigMap\n")
    remove_blob(Path(farm_env["FARM_OBJECT_STORE"]), record.output_digest)
    line = single_error(farm("output", "web/prod", env=farm_env))
    assert line.startswith(f"Error: blob sha256/{record.output_digest} is missing from local object store")


def test_a_command_whose_output_reader_went_away_ends_quietly(
    farm_env: dict[str, str], cli_fleet: Fleet
) -> None:
    # farm verify --all | head -c1: it said "Error: Broken pipe"
    cli_fleet.render(b"kind: ConfigMap\n")
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "farm", "verify", "--all"],
        env={**clean, **farm_env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the first line is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1  # as click ends any command on a broken pipe
    assert stderr == ""


def test_farm_status_of_a_name_that_looks_like_markup_is_an_error_line(farm_env: dict[str, str]) -> None:
    assert single_error(farm("status", "[/]", env=farm_env)) == (
        "Error: run [/] does not exist (give a run id, a unique prefix of one, or latest; farm runs lists them)"
    )


def test_farm_runs_with_a_negative_limit_is_refused(farm_env: dict[str, str]) -> None:
    assert (
        single_error(farm("runs", "--limit", "-1", env=farm_env))
        == "Error: --limit: must be at least 1, got -1"
    )


def test_farm_runs_with_a_limit_past_what_the_database_holds_lists_every_run(
    farm_env: dict[str, str], cli_fleet: Fleet
) -> None:
    cli_fleet.new_run()
    listed = farm("runs", "--limit", "9" * 20, env=farm_env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == farm("runs", env=farm_env).stdout != ""


def test_farm_serve_on_a_port_in_use_is_one_error_line_naming_it(
    farm_env: dict[str, str], cli_fleet: Fleet
) -> None:
    # uvicorn logged the reason among its start-up lines and exited with status 3
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = single_error(farm("serve", "--port", str(port), env=farm_env))
    assert line == (
        f"Error: --host 127.0.0.1 --port {port}: cannot listen there: Address already in use"
        " (choose another --port or --host)"
    )


def test_farm_serve_on_a_port_past_65535_is_refused_naming_the_option(farm_env: dict[str, str]) -> None:
    result = farm("serve", "--port", "99999", env=farm_env)  # an OverflowError traceback from bind()
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "--port" in result.stderr


def test_farm_serve_with_two_catalogs_of_one_fleet_name_is_one_error_line_naming_both(
    farm_env: dict[str, str], cli_fleet: Fleet, tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        shutil.copytree(ROOT / "examples" / "fleet", folder)
    # the second was silently the only one a trigger of fleet "example" could run
    result = farm(
        "serve", "--port", str(free_port()), "--catalog", str(first), "--catalog", str(second), env=farm_env
    )
    assert single_error(result) == (
        f"Error: --catalog {second}: its fleet name 'example' is also that of --catalog {first} "
        "(POST /api/runs names a catalog by its fleet name: give each a name of its own)"
    )


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_catalog_argument_naming_another_file_than_fleet_yaml_says_it_is_not_a_catalog(
    command: str, tmp_path: Path
) -> None:
    # a ClusterProfile's file was read as the fleet: "Error: fleet.yaml: spec.capabilities: unknown field"
    profile = ROOT / "examples" / "fleet" / "clusters" / "prod-nginx.yaml"
    assert single_error(farm(command, str(profile), env=embedded(tmp_path))) == (
        f"Error: {profile}: not a catalog: give the catalog's folder (the one holding fleet.yaml) or its fleet.yaml"
    )
    assert not (tmp_path / ".farm").exists()


@pytest.mark.parametrize("command", [["run", "catalog"], ["daemon", "start"]])
def test_a_farm_home_that_is_a_file_says_so_in_one_line_and_leaves_it_alone(
    command: list[str], tmp_path: Path
) -> None:
    # it said "Error: <home>/farm.db: Not a directory" ("<home>/daemon.log: …" for daemon start)
    home = tmp_path / "home"
    home.write_text("notes\n")
    shutil.copytree(ROOT / "examples" / "fleet", tmp_path / "catalog")
    result = farm(*command, env={"FARM_HOME": str(home)}, cwd=tmp_path)
    assert single_error(result) == (
        f"Error: {home}: is a file, not a folder (FARM_HOME, and the FARM_* settings naming paths, name folders)"
    )
    assert home.read_text() == "notes\n"


@pytest.mark.parametrize("command", ["upgrade", "downgrade"])
def test_farm_db_with_an_empty_revision_is_one_error_line(command: str, tmp_path: Path) -> None:
    # an unset shell variable ("farm db downgrade $REV"): Alembic failed an assertion, a traceback
    assert single_error(farm("db", command, "", env=embedded(tmp_path))) == (
        "Error: REVISION is empty: give a revision id, head or base (farm db downgrade --help)"
    )
    assert not (tmp_path / ".farm").exists()


def test_farm_keys_with_a_file_where_their_folder_goes_name_the_file(tmp_path: Path) -> None:
    # mkdir said only "Error: <file>: File exists"
    taken = tmp_path / "taken"
    taken.write_text("notes\n")
    hint = "(FARM_HOME, and the FARM_* settings naming paths, name folders)"
    generated = farm("keys", "generate", "--out", str(taken), env=embedded(tmp_path))
    assert single_error(generated) == (
        f"Error: --out {taken}: {taken} is a file, not a folder (--out names the folder for the key pair)"
    )
    below = farm("keys", "generate", "--out", str(taken / "keys"), env=embedded(tmp_path))
    assert single_error(below) == (
        f"Error: --out {taken / 'keys'}: {taken} is a file, not a folder (--out names the folder for the key pair)"
    )
    farm("keys", "generate", "--out", str(tmp_path / "keys"), env=embedded(tmp_path))
    trust = embedded(tmp_path, FARM_TRUSTED_SIGNERS=str(taken / "trusted_signers"))
    trusted = farm("keys", "trust", str(tmp_path / "keys" / "signing.pub"), env=trust)
    assert single_error(trusted) == f"Error: {taken}: is a file, not a folder {hint}"
    assert taken.read_text() == "notes\n"


def test_farm_build_with_output_at_a_file_names_the_option(tmp_path: Path) -> None:
    app = ROOT / "tests" / "golden" / "passthrough-deployment"
    target = tmp_path / "taken"
    target.write_text("")
    args = ["build", str(app / "app.yaml"), "--profile", str(app / "cluster.yaml"), "-o", str(target)]
    line = single_error(farm(*args, env=embedded(tmp_path)))
    assert line == f"Error: -o {target}: not a folder (-o names the folder that gets <application>.yaml)"
    assert target.read_text() == ""


def farm_in_a_removed_folder(
    folder: Path, *args: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``farm ARGS`` run from ``folder`` after the folder was removed, as from a shell left in it."""
    folder.mkdir()
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    return subprocess.run(
        [sys.executable, "-m", "farm", *args],
        env={**clean, **env},
        cwd=folder,
        preexec_fn=lambda: os.rmdir(folder),  # runs in the child, after it entered the folder
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("command", [["runs"], ["run", "catalog"], ["plan", "catalog"]])
def test_a_command_run_from_a_removed_folder_says_so_in_one_line(command: list[str], tmp_path: Path) -> None:
    result = farm_in_a_removed_folder(tmp_path / "removed", *command, env=embedded(tmp_path))
    assert single_error(result) == (
        "Error: the current folder no longer exists (it was removed while this shell was in it);"
        " cd to a folder that exists and run the command again"
    )
    assert not (tmp_path / ".farm").exists()  # nothing was started or written


# --- File modes ----------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_embedded_database_and_its_folder_are_private(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".farm"
    engine = create_farm_engine(f"sqlite:///{home / 'farm.db'}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        connection.exec_driver_sql("INSERT INTO t VALUES (1)")
        assert (home / "farm.db-wal").exists()
        modes = {name: mode(home / name) for name in ("farm.db", "farm.db-wal", "farm.db-shm")}
    engine.dispose()
    assert mode(home) == 0o700 and mode(home.parent) == 0o700
    assert modes == {"farm.db": 0o600, "farm.db-wal": 0o600, "farm.db-shm": 0o600}


def test_local_blobs_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "objects")
    small, large = b"manifests", b"m" * (SMALL_BLOB_BYTES + 1)
    digests = store.put_many([small, large])
    assert mode(tmp_path / "objects" / "sha256" / digests[1]) == 0o400  # a large blob: a file
    assert mode(tmp_path / "objects") == 0o700 and mode(tmp_path / "objects" / "sha256") == 0o700
    # small blobs: rows of one database, its log files as private as it
    assert {p.name: mode(p) for p in (tmp_path / "objects").glob("small-blobs.db*")} == {
        "small-blobs.db": 0o600,
        "small-blobs.db-wal": 0o600,
        "small-blobs.db-shm": 0o600,
    }
    assert [store.get(digest) for digest in digests] == [small, large]
    for digest in digests:
        store.delete(digest)
        assert not store.exists(digest)
