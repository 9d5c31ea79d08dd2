"""``farm doctor``: check the set-up, one line per check with what to do; exit 1 if any fails.

Checks, in order: the settings parse; the database is reachable and migrated; the broker is
reachable and which workers consume this core's queue (when a broker is set); the object store is
reachable and its bucket present; the signing key is present and trusted; helm is present (and
its version) when the catalog has chart components; the daemon's state. Nothing is created: on a
fresh embedded home the database, the object folder and the key are reported as made by the first
``farm run``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import typer

from farm.commands._errors import describe
from farm.settings import (
    FarmSettings,
    file_in_the_way,
    home_defaults,
    load_settings,
    not_a_folder,
    redact_url,
)

BROKER_TIMEOUT_SECONDS = 2.0
INSPECT_TIMEOUT_SECONDS = 1.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _passed(name: str, detail: str) -> Check:
    return Check(name, True, detail)


def _failed(name: str, detail: str) -> Check:
    return Check(name, False, detail)


def _guarded(name: str, check: Callable[[], Check]) -> Check:
    """A check whose unexpected infrastructure error becomes its failing line (never a traceback
    for a known failure)."""
    try:
        return check()
    except Exception as error:
        message = describe(error)
        if message is None:
            raise
        return _failed(name, message)


def _in_the_way(name: str, folder: Path) -> Check | None:
    """A failed check when the first farm run could not make ``folder`` (a FARM_HOME naming a
    file: the check said "not created yet (the first farm run creates it)"); None when it can."""
    blocker = file_in_the_way(folder)
    if blocker is None:
        return None
    return _failed(name, describe(not_a_folder(folder, blocker)) or str(blocker))


def _embedded(settings: FarmSettings, setting: str) -> bool:
    return str(getattr(settings, setting)) == home_defaults(settings.home)[setting]


def check_database(settings: FarmSettings) -> Check:
    from farm.store.context import missing_database_file
    from farm.store.health import database_is_current, database_revision
    from farm.store.migrate import HEAD_REVISION

    where = redact_url(settings.database_url)
    missing = missing_database_file(settings)
    if missing is not None:
        if _embedded(settings, "database_url"):
            return _in_the_way("database", missing.parent) or _passed(
                "database", f"{where}: not created yet (the first farm run creates it)"
            )
        return _failed("database", f"no database at {missing}: run farm db upgrade, or fix FARM_DATABASE_URL")
    revision = database_revision(settings)
    if not database_is_current(revision):
        return _failed(
            "database",
            f"{where} is at revision {revision or 'none'}, this farm needs {HEAD_REVISION}: run farm db upgrade",
        )
    return _passed("database", f"{where}: reachable, at revision {revision}")


def check_broker(settings: FarmSettings) -> Check:
    if not settings.broker_url:
        return _passed("broker", "none set (FARM_BROKER_URL): runs render on this machine's process pool")
    from farm.execution.celery import CeleryQueue
    from farm.identity.fingerprint import core_version

    where = redact_url(settings.broker_url)
    client = CeleryQueue(settings)
    with client.client.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    replies = client.client.control.inspect(timeout=INSPECT_TIMEOUT_SECONDS).active_queues() or {}
    ours = client.queue_for()
    prefix = f"{settings.celery_queue}."
    consumers = sorted(w for w, queues in replies.items() if any(q.get("name") == ours for q in queues or ()))
    others = sorted(
        f"{worker} (core {queue['name'].removeprefix(prefix)})"
        for worker, queues in replies.items()
        for queue in queues or ()
        if queue.get("name", "").startswith(prefix) and queue.get("name") != ours
    )
    elsewhere = f"; on other cores' queues: {', '.join(others)}" if others else ""
    if not consumers:
        return _failed(
            "broker",
            f"{where}: reachable, but no worker consumes queue {ours} (core {core_version()}): "
            f"start one there with farm worker{elsewhere}",
        )
    return _passed(
        "broker",
        f"{where}: reachable; {len(consumers)} worker(s) consume queue {ours} (core {core_version()}): "
        f"{', '.join(consumers)}{elsewhere}",
    )


def check_object_store(settings: FarmSettings) -> Check:
    if not settings.uses_s3:
        folder = Path(settings.object_store)
        if folder.is_dir():
            return _passed("object store", f"folder {folder}: present")
        if _embedded(settings, "object_store"):
            return _in_the_way("object store", folder) or _passed(
                "object store", f"folder {folder}: not created yet (the first farm run creates it)"
            )
        return _failed("object store", f"folder {folder} does not exist: create it, or fix FARM_OBJECT_STORE")
    from farm.store.health import BucketMissing, probe_s3_bucket

    endpoint = settings.s3_endpoint_url or "AWS"
    try:
        location = probe_s3_bucket(settings)
    except BucketMissing as missing:
        return _failed(
            "object store",
            f"bucket {missing} does not exist at {endpoint}: create it (the farm never does), or fix FARM_OBJECT_STORE",
        )
    return _passed("object store", f"s3://{location} at {endpoint}: reachable, bucket present")


def check_signing_key(settings: FarmSettings) -> Check:
    from farm.evidence.keys import load_configured_trust, load_signer

    path = settings.signing_key_path
    if not path.exists():
        if settings.signing_key_is_embedded and not settings.trusted_signers_path.exists():
            return _in_the_way("signing key", path.parent) or _passed(
                "signing key", f"{path}: not generated yet (the first farm run generates it)"
            )
        return _failed(
            "signing key",
            f"{path} does not exist: restore it, or make one with farm keys generate (FARM_SIGNING_KEY names it)",
        )
    signer = load_signer(path)
    trusted = load_configured_trust(settings)
    if signer.keyid not in trusted:
        return _failed(
            "signing key",
            f"{path} (key {signer.keyid}) is not trusted by {settings.trusted_signers_path}: "
            "trust it with farm keys trust PUBKEY, or restore the trusted key",
        )
    return _passed("signing key", f"{path}: key {signer.keyid}, trusted")


def chart_applications(catalog: Path) -> list[str]:
    """The applications of ``catalog`` with a chart component, read off the loaded catalog as the
    loader reads chart references (a type that comes from a parameter included); nothing is
    fetched. CatalogError when the catalog does not load."""
    from farm.catalog import load_catalog
    from farm.catalog.charts import NoCharts, applications_with_charts

    return applications_with_charts(load_catalog(catalog, charts=NoCharts()))


def check_helm(catalog: Path | None) -> Check:
    from farm.build.charts import find_helm, helm_version
    from farm.catalog import CatalogError

    helm = find_helm()
    if helm is not None:
        return _passed("helm", f"{helm_version(helm)} at {helm}")
    try:
        charts = chart_applications(catalog) if catalog is not None else []
    except CatalogError as error:
        return _failed(
            "helm",
            f"not on PATH, and whether catalog {catalog} needs it is unknown: it does not load "
            f"({error.problems[0]}): fix the catalog (farm plan CATALOG names every problem)",
        )
    if charts:
        shown = ", ".join(charts[:3]) + (" …" if len(charts) > 3 else "")
        return _failed(
            "helm",
            f"not on PATH, and catalog {catalog} has chart components ({shown}): install helm 3 on "
            "every machine that renders",
        )
    where = (
        f"catalog {catalog} renders no chart with helm (no helmtemplate component, no helm component "
        "with delivery: template; Flux renders the others in the cluster)"
        if catalog is not None
        else "no catalog named (--catalog)"
    )
    return _passed("helm", f"not on PATH; not needed: {where}")


def check_daemon(settings: FarmSettings) -> Check:
    from farm.daemon import protocol
    from farm.daemon.server import ask

    if os.environ.get("FARM_DAEMON") == "off":
        return _passed("daemon", "off (FARM_DAEMON=off): every farm run starts in its own process")
    status = ask(settings.home / protocol.SOCKET_NAME, {"op": "status"}, timeout=2.0)
    if status is None:
        return _passed(
            "daemon", f"none runs for {settings.home}: farm daemon start makes farm run start warm"
        )
    if not status["same_code"]:
        return _passed(
            "daemon",
            f"pid {status['pid']} runs older farm code: it is replaced at the next farm run (or farm daemon stop)",
        )
    return _passed(
        "daemon", f"pid {status['pid']} serves {settings.home}, {status['served']} command(s) served"
    )


def run_checks(catalog: Path | None) -> list[Check]:
    try:
        settings = load_settings()
    except Exception as error:
        message = describe(error)
        if message is None:
            raise
        return [_failed("settings", f"{message} (fix the variable it names)")]
    catalog = catalog or settings.qualification_catalog
    return [
        _passed("settings", f"FARM_* variables parse; home {settings.home}"),
        _guarded("database", lambda: check_database(settings)),
        _guarded("broker", lambda: check_broker(settings)),
        _guarded("object store", lambda: check_object_store(settings)),
        _guarded("signing key", lambda: check_signing_key(settings)),
        _guarded("helm", lambda: check_helm(catalog)),
        _guarded("daemon", lambda: check_daemon(settings)),
    ]


def doctor_command(
    catalog: Path | None = typer.Option(
        None,
        "--catalog",
        help="the catalog whose chart components need helm (default: FARM_QUALIFICATION_CATALOG)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print the checks as one JSON object"),
) -> None:
    """Check the set-up: settings, database, broker and workers, object store, signing key, helm,
    daemon. One line per check with what to do; exit 1 if any fails."""
    checks = run_checks(catalog)
    healthy = all(check.ok for check in checks)
    if as_json:
        typer.echo(json.dumps({"ok": healthy, "checks": [asdict(c) for c in checks]}, sort_keys=True))
    else:
        for check in checks:
            typer.echo(f"{'ok  ' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    if not healthy:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)
