"""The farm's settings, read from ``FARM_*`` environment variables (pydantic-settings).

With no variable set, everything is embedded under ``./.farm/`` (``FARM_HOME``): a SQLite
database, an object folder, a signing key generated on first use and the local process pool.
Each setting's type, default and meaning live on its field in :class:`FarmSettings`;
``docs/configuration.md`` is generated from them (``python -m farm.settings_doc``) and a test keeps
the two equal.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

ENV_PREFIX = "FARM_"


class SettingsError(ValueError):
    """A ``FARM_*`` variable holds a value the farm cannot use; the message names the variable."""


BROKER_REQUIRED = (
    "FARM_BROKER_URL is not set: the Celery executor, farm worker, farm beat and farm reconcile "
    "need the broker every farm process shares (e.g. FARM_BROKER_URL=redis://127.0.0.1:6379/0)"
)

# scheme://user:password@host → the password is the part between the first ':' after the scheme's
# '//' and the last '@' before the path (a password may itself hold '@' or ':').
_URL_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/?#@:]*):(?P<password>[^/?#]*)@")


def redact_url(url: str) -> str:
    """``url`` with the password of its userinfo replaced by ``***``, for every message that
    shows a configured URL (database, broker)."""
    return _URL_PASSWORD.sub(lambda match: f"{match['head']}:***@", url, count=1)


def home_defaults(home: Path) -> dict[str, str]:
    """The defaults that live under ``FARM_HOME``, by setting name: what an unset
    ``FARM_DATABASE_URL``, ``FARM_OBJECT_STORE``, ``FARM_SIGNING_KEY`` or ``FARM_TRUSTED_SIGNERS``
    means for ``home`` (``docs/configuration.md`` shows them for ``<home>``)."""
    return {
        "database_url": f"sqlite:///{home / 'farm.db'}",
        "object_store": str(home / "objects"),
        "signing_key": str(home / "keys" / "signing.key"),
        "trusted_signers": str(home / "keys" / "trusted_signers"),
    }


class FarmSettings(BaseSettings):
    """Every setting of the farm, with the embedded defaults filled in from ``home``."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    home: Path = Field(
        default=Path(".farm"),
        description=(
            "The embedded root, relative to the current directory: the SQLite database, the object "
            "folder and the keys live under it while their own settings are unset."
        ),
    )
    database_url: str = Field(
        default="",
        description=(
            "The database: `sqlite:///PATH`, or PostgreSQL as `postgresql://…` (`postgres://…` and "
            "`postgresql+psycopg://…` are accepted too; the driver is always psycopg 3). Any other "
            "scheme is refused. `farm run` migrates the default database itself; any other is "
            "migrated only by `farm db upgrade`."
        ),
    )
    object_store: str = Field(
        default="",
        description=(
            "Where blobs go: a folder, or `s3://BUCKET[/PREFIX]` on S3 or MinIO. The bucket must "
            "exist: the farm does not create it. A folder serves the processes of one host: its "
            "small blobs are rows of a SQLite file in it (`small-blobs.db`), which a network "
            "filesystem shared by several hosts cannot hold safely; give those hosts a bucket."
        ),
    )
    s3_endpoint_url: str | None = Field(
        default=None,
        description="The S3 endpoint (MinIO or another S3-compatible store); unset: boto3's default, AWS.",
    )
    s3_region: str | None = Field(default=None, description="The S3 region; unset: boto3's default.")
    s3_access_key_id: str | None = Field(
        default=None,
        description=(
            "The S3 access key id, set together with FARM_S3_SECRET_ACCESS_KEY or not at all; with "
            "neither, boto3's own chain is used (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, "
            "profiles, instance roles)."
        ),
    )
    s3_secret_access_key: SecretStr | None = Field(
        default=None,
        description=(
            "The S3 secret access key, set together with FARM_S3_ACCESS_KEY_ID; never shown in a "
            "repr or an error message."
        ),
    )
    signing_key: Path | None = Field(
        default=None,
        description=(
            "The ed25519 private key (PEM) every output, audit and qualification statement is "
            "signed with. When set, the file must exist (`farm keys generate` writes one); the "
            "default is generated on first use and its public key added to the trusted signers."
        ),
    )
    trusted_signers: Path | None = Field(
        default=None,
        description=(
            "The public keys whose signatures count (`farm verify`, the dashboard, qualification): "
            "a file of PEM public keys, or a folder of `*.pub`/`*.pem` files; `farm keys trust "
            "PUBKEY` adds one. A path that does not exist trusts no signer."
        ),
    )
    broker_url: str | None = Field(
        default=None,
        description=(
            "The Celery broker (Redis), e.g. `redis://127.0.0.1:6379/0`. Unset: `farm worker`, "
            "`farm beat`, `farm reconcile` and the Celery executor refuse to start rather than "
            "guess one. Set: `celery` becomes the default executor."
        ),
    )
    celery_queue: str = Field(
        default="farm",
        description=(
            "The queue name prefix. Jobs and qualification tasks go to the queue "
            "`<FARM_CELERY_QUEUE>.<core version>` of the core their run was planned under, and "
            "`farm worker` consumes only its own core's queue, so during a rolling upgrade a job "
            "waits for a worker of its core. Another prefix isolates one set of workers (a team, "
            "a test run) on a shared broker."
        ),
    )
    celery_jobs_per_message: int = Field(
        default=8,
        ge=1,
        le=64,
        description=(
            "Jobs a Celery message carries, at most. A worker renders each job of a message while "
            "it records the one before, so its core does not wait for the database; the last "
            "messages of a run carry fewer, so the workers finish together. `1`: a message per "
            "job (a worker then renders and records in turn)."
        ),
    )
    worker_synchronous_commit: Literal["on", "off"] = Field(
        default="off",
        description=(
            "PostgreSQL: whether a Celery worker's commits wait for their write-ahead log to reach "
            "the disk. `off`: a job's claim and its results commit without that wait (about one "
            "disk flush each, the biggest part of a job's time on the database), as the embedded "
            "SQLite database commits (`synchronous=NORMAL`): a crash of the database server may "
            "lose the jobs committed in its last fraction of a second, never its consistency, and "
            "the reconciler sends those jobs again. `on`: every commit waits for its flush."
        ),
    )
    executor: Literal["local", "celery"] = Field(
        default="local",
        description=(
            "Where `farm run` and `farm qualify` render: `local`, a process pool on every core of "
            "this machine, or `celery`, the workers. `celery` when FARM_BROKER_URL is set; "
            "`--executor` overrides both."
        ),
    )
    batch_size: int = Field(
        default=50,
        ge=1,
        le=10_000,
        description="Targets per job, at most (a job holds targets of one application).",
    )
    audit_sample: int = Field(
        default=0,
        ge=0,
        description=(
            "Targets the beat's scheduled `farm audit` re-renders from the latest run; `0` turns "
            "the scheduled audit off."
        ),
    )
    audit_interval: float = Field(default=86_400.0, gt=0, description="Seconds between scheduled audits.")
    log_format: Literal["text", "json"] = Field(
        default="text",
        description=(
            "`text`, or `json`: one JSON object a line, each record of a job with its run and job "
            "ids (workers, beat, `farm serve`, `farm run` and its local pool)."
        ),
    )
    qualification_max_age_days: int = Field(
        default=30,
        ge=1,
        description="Qualification evidence older than this many days is `expired`.",
    )
    qualification_catalog: Path | None = Field(
        default=None,
        description=(
            "The catalog folder the beat's scheduled re-qualification reads, and Celery workers "
            "re-qualifying after a run (FARM_QUALIFICATION_ON_RUN=requalify). Unset: the beat "
            "refreshes no state against a catalog."
        ),
    )
    qualification_schedule: str = Field(
        default="*/5 * * * *",
        description=(
            "When `farm beat` looks for due qualifications (`farm.qualification.find_due`: refresh "
            "every state against FARM_QUALIFICATION_CATALOG, then send each stale, expired, failed "
            "or unqualified subject to a worker): crontab syntax, five fields (minute hour "
            "day-of-month month day-of-week), in UTC. Default: every 5 minutes. A value that does "
            "not parse stops `farm beat` and `farm worker` with an error naming this setting."
        ),
    )
    qualification_claim_lease_seconds: int = Field(
        default=3600,
        ge=1,
        description=(
            "Seconds a subject sent to be qualified (by the beat, or by `requalify` after a run) "
            "stays claimed: it is not sent again before then, even while still due, so a "
            "qualification in flight is not sent twice. A subject whose qualification failed or "
            "was lost is sent again at the first schedule after its lease ends."
        ),
    )
    reconcile_schedule: str = Field(
        default="* * * * *",
        description=(
            "When `farm beat` re-sends jobs stuck in queued or running (`farm.reconcile`): crontab "
            "syntax, five fields, in UTC. Default: every minute."
        ),
    )
    qualification_on_run: Literal["off", "stale", "requalify"] = Field(
        default="stale",
        description=(
            "What `farm run` does to qualification after the run: `stale` marks the subjects whose "
            "evidence the run's catalog no longer matches stale (with the reason); `requalify` "
            "also qualifies each stale subject again (local: in the command, after the run; "
            "Celery: a task per subject, read from FARM_QUALIFICATION_CATALOG); `off` leaves "
            "qualification alone."
        ),
    )
    publish_to: str | None = Field(
        default=None,
        description=(
            "Where a completed fleet run publishes its outputs (`farm publish`), as `git URL` or "
            "`oci REGISTRY/REPO`; unset: runs do not publish. Credentials come from git's helpers "
            "or the environment, never from this value (a password in it is refused)."
        ),
    )
    publish_require: Literal["none", "qualified"] = Field(
        default="none",
        description=(
            "`qualified`: a cluster's outputs publish only while each of its subjects is qualified "
            "with current evidence (others are skipped with the reason); `none`: every cluster "
            "whose targets all rendered."
        ),
    )
    publish_layout: Literal["folders", "branches"] = Field(
        default="folders",
        description=(
            "Git publishes: `folders` writes `clusters/<cluster>/` on one branch; `branches` "
            "writes a branch `<FARM_PUBLISH_BRANCH>-<cluster>` per cluster."
        ),
    )
    publish_branch: str = Field(
        default="main", description="The git branch (or branch prefix) publishes write."
    )
    publish_oci_username: str | None = Field(
        default=None,
        description=(
            "The user an `oci` publish answers the registry's Basic or Bearer challenge with "
            "(with FARM_PUBLISH_OCI_PASSWORD); unset: anonymous."
        ),
    )
    publish_oci_password: SecretStr | None = Field(
        default=None, description="The password or token of FARM_PUBLISH_OCI_USERNAME (never shown)."
    )
    publish_attempts: int = Field(
        default=3,
        ge=1,
        description=(
            "Attempts of a publish before it is left failed for `farm publish --retry` (a push "
            "refused, a remote or registry unreachable)."
        ),
    )
    publish_backoff_seconds: float = Field(
        default=2.0,
        ge=0,
        description="Seconds before a publish's second attempt; doubled before each next one.",
    )
    api_token: str | None = Field(
        default=None,
        description=(
            "The bearer token `farm serve` requires to trigger a run or a qualification; unset: "
            "triggering is refused (403)."
        ),
    )
    render_timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        description=(
            "Wall-clock seconds one render may take in a worker; past it the render is stopped and "
            "its target fails with `render.timeout`."
        ),
    )
    render_memory_mib: int = Field(
        default=1024,
        ge=16,
        description=(
            "MiB of address space one render may add to its worker; past it the render is stopped "
            "and its target fails with `render.memory`."
        ),
    )
    catalog_max_file_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1,
        description=(
            "The largest catalog file the loader reads (4 MiB by default); a larger one is refused "
            "(`catalog.unsafe_file`) with its application or ClusterProfile."
        ),
    )
    api_read_requires_token: bool = Field(
        default=False,
        description="`true`: the API's read endpoints need the bearer token too.",
    )
    # read before the settings are, by the daemon client (standard library only)
    daemon: Literal["on", "off"] = Field(
        default="on",
        description=(
            "`on`: `farm run` and `farm plan` hand themselves to this FARM_HOME's `farm daemon` "
            "when one runs; `off`: never."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _drop_empty(cls, data: object) -> object:
        # An exported-but-empty variable means "not set", not "the empty string".
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value not in ("", None)}
        return data

    @model_validator(mode="after")
    def _fill_embedded_defaults(self) -> FarmSettings:
        home = self.home.expanduser().absolute()
        under_home = home_defaults(home)
        defaults = {
            "home": home,
            "database_url": self.database_url or under_home["database_url"],
            "object_store": self.object_store or under_home["object_store"],
        }
        for name, value in defaults.items():
            object.__setattr__(self, name, value)
        if (self.s3_access_key_id is None) != (self.s3_secret_access_key is None):
            raise ValueError(
                "FARM_S3_ACCESS_KEY_ID and FARM_S3_SECRET_ACCESS_KEY go together: set both, "
                "or neither for boto3's own credentials (AWS_ACCESS_KEY_ID, profiles, roles)"
            )
        return self

    @property
    def signing_key_path(self) -> Path:
        """Where the signing key lives: ``FARM_SIGNING_KEY`` or ``<home>/keys/signing.key``."""
        return (
            self.signing_key
            if self.signing_key is not None
            else Path(home_defaults(self.home)["signing_key"])
        )

    @property
    def signing_key_is_embedded(self) -> bool:
        """True when no key was configured, so the farm may generate one on first use."""
        return self.signing_key is None

    @property
    def trusted_signers_path(self) -> Path:
        """``FARM_TRUSTED_SIGNERS`` or ``<home>/keys/trusted_signers``."""
        if self.trusted_signers is not None:
            return self.trusted_signers
        return Path(home_defaults(self.home)["trusted_signers"])

    @property
    def uses_s3(self) -> bool:
        return self.object_store.startswith("s3://")


def make_private_folder(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700 (blobs, ``farm.db`` and keys live
    there: nobody else on the host reads them). Folders that already exist are left alone."""
    missing: list[Path] = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    if not current.is_dir():  # a FARM_HOME naming a file: every path under it failed "Not a directory"
        raise not_a_folder(Path(path), current)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it first
            folder.mkdir(mode=0o700)


def file_in_the_way(path: Path) -> Path | None:
    """``path``, or the nearest of its parents that exists, when that is not a folder (a file):
    ``make_private_folder(path)`` cannot make it. None when it exists as a folder or can be made."""
    current = Path(path)
    while not current.exists() and current != current.parent:
        current = current.parent
    return None if current.is_dir() else current


def not_a_folder(path: Path, blocker: Path) -> NotADirectoryError:
    """The error of a folder the farm cannot make because ``blocker`` (itself or a parent) is a file."""
    made = "" if blocker == path else f": {path} cannot be made in it"
    return NotADirectoryError(
        errno.ENOTDIR,
        f"is a file, not a folder{made} (FARM_HOME, and the FARM_* settings naming paths, name folders)",
        str(blocker),
    )


def load_settings(**overrides: object) -> FarmSettings:
    """Read the settings from the environment; a bad value raises ``SettingsError`` naming it.

    Without ``overrides`` the settings read for the same environment and working folder are
    reused: they are a function of the ``FARM_*`` variables, ``HOME`` (a ``~`` in a path) and the
    working folder (a relative ``FARM_HOME``), and reading them costs milliseconds (the farm
    daemon reads them for each command it serves)."""
    key = None if overrides else _settings_key()
    if key is not None and (known := _LOADED.get(key)) is not None:
        return known
    settings = _read_settings(overrides)
    if key is not None:
        if len(_LOADED) >= _LOADED_KEPT:  # the oldest goes: one read earlier stays until 16 newer
            del _LOADED[next(iter(_LOADED))]
        _LOADED[key] = settings
    return settings


_LOADED: dict[tuple[object, ...], FarmSettings] = {}
_LOADED_KEPT = 16


def _settings_key() -> tuple[object, ...] | None:
    """What the settings read from the environment depend on; None where the working folder is gone."""
    try:
        folder = os.getcwd()
    except OSError:
        return None
    farm = sorted((name, value) for name, value in os.environ.items() if name.upper().startswith(ENV_PREFIX))
    return folder, os.environ.get("HOME"), tuple(farm)


def _read_settings(overrides: dict[str, object]) -> FarmSettings:
    try:
        return FarmSettings(**overrides)
    except ValidationError as error:
        problems = []
        for issue in error.errors():
            field = ".".join(str(part) for part in issue["loc"])
            if field:
                problems.append(f"{ENV_PREFIX}{field.upper()}: {issue['msg']}")
            else:  # a check across settings: its message names them (no input value is shown)
                problems.append(issue["msg"].removeprefix("Value error, "))
        raise SettingsError("invalid farm settings: " + "; ".join(problems)) from None
