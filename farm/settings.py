"""The farm's settings, read from ``FARM_*`` environment variables.

With no variable set, everything is embedded under ``./.farm/`` (``FARM_HOME``, relative to the
current directory): the SQLite file ``farm.db``, the object folder ``objects/``, the signing key
``keys/signing.key`` (generated on first use), the trusted-signers file ``keys/trusted_signers``
and the local process-pool executor.

Variables:

- ``FARM_HOME``: the embedded root (default ``.farm``).
- ``FARM_DATABASE_URL``: ``postgresql+psycopg://…`` or ``sqlite:///…`` (default SQLite under home).
- ``FARM_OBJECT_STORE``: a folder path, or ``s3://bucket[/prefix]`` (default ``<home>/objects``).
- ``FARM_S3_ENDPOINT_URL``, ``FARM_S3_REGION``: for S3 or MinIO.
- ``FARM_S3_ACCESS_KEY_ID``, ``FARM_S3_SECRET_ACCESS_KEY``: the S3 credentials, both or neither.
  When unset, boto3's normal chain is the fallback (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
  profiles, instance roles). The secret is a ``SecretStr``: never shown in a repr or a message.
- ``FARM_SIGNING_KEY``: path of the ed25519 private key (PEM). When set, the file must exist.
- ``FARM_TRUSTED_SIGNERS``: a file of PEM public keys, or a folder of ``*.pub``/``*.pem`` files.
- ``FARM_BROKER_URL``: the Celery broker (Redis) for the distributed executor. It has no default:
  ``farm worker``, ``farm beat``, ``farm reconcile`` and the Celery executor refuse to start
  without it rather than guess one.
- ``FARM_CELERY_QUEUE``: the Celery queue jobs are sent to and workers consume (default ``farm``);
  a separate name isolates one set of workers (a test run, a team) on a shared broker.
- ``FARM_EXECUTOR``: ``local`` (default) or ``celery``.
- ``FARM_BATCH_SIZE``: targets per job, at most (default 50: see the README's measurement).
- ``FARM_AUDIT_SAMPLE``: targets the scheduled ``farm audit`` re-renders from the latest run
  (default 0: the beat entry is off).
- ``FARM_AUDIT_INTERVAL``: seconds between scheduled audits (default 86400, one day).
- ``FARM_QUALIFICATION_MAX_AGE_DAYS``: qualification evidence older than this is expired (30).
- ``FARM_QUALIFICATION_CATALOG``: the catalog folder the beat's re-qualification reads.
- ``FARM_QUALIFICATION_ON_RUN``: ``stale`` (default): ``farm run`` marks the subjects whose
  evidence its catalog no longer matches stale; ``requalify``: and qualifies them again;
  ``off``: a run leaves qualification alone.
- ``FARM_LOG_FORMAT``: ``text`` (default) or ``json`` (one JSON object a line, with run and job ids).
- ``FARM_RENDER_TIMEOUT_SECONDS``: wall-clock seconds one render may take in a worker (default 60);
  a render past it is stopped and its target fails with ``render.timeout``.
- ``FARM_RENDER_MEMORY_MIB``: MiB of address space one render may add to its worker (default
  1024); a render that needs more is stopped and its target fails with ``render.memory``.
- ``FARM_DAEMON``: ``on`` (default): ``farm run`` and ``farm plan`` are handed to this home's
  ``farm daemon`` when one runs; ``off``: never.
- ``FARM_CATALOG_MAX_FILE_BYTES``: the largest catalog file the loader reads (default 4 MiB);
  a larger one is refused with its application or ClusterProfile.
"""

from __future__ import annotations

import contextlib
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


class FarmSettings(BaseSettings):
    """Every setting of the farm, with the embedded defaults filled in from ``home``."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    home: Path = Path(".farm")
    database_url: str = ""
    object_store: str = ""
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = None
    signing_key: Path | None = None
    trusted_signers: Path | None = None
    broker_url: str | None = None
    celery_queue: str = "farm"
    executor: Literal["local", "celery"] = "local"
    batch_size: int = Field(default=50, ge=1, le=10_000)
    audit_sample: int = Field(default=0, ge=0)
    audit_interval: float = Field(default=86_400.0, gt=0)
    log_format: Literal["text", "json"] = "text"
    # qualification evidence older than this many days is expired (FARM_QUALIFICATION_MAX_AGE_DAYS)
    qualification_max_age_days: int = Field(default=30, ge=1)
    # the catalog folder the scheduled re-qualification reads (FARM_QUALIFICATION_CATALOG)
    qualification_catalog: Path | None = None
    # what `farm run` does to qualification afterwards (FARM_QUALIFICATION_ON_RUN)
    qualification_on_run: Literal["off", "stale", "requalify"] = "stale"
    api_token: str | None = None
    render_timeout_seconds: float = Field(default=60.0, gt=0)
    render_memory_mib: int = Field(default=1024, ge=16)
    catalog_max_file_bytes: int = Field(default=4 * 1024 * 1024, ge=1)
    api_read_requires_token: bool = False
    # off: farm run and farm plan never go to a farm daemon (FARM_DAEMON; read by farm/daemon/client.py)
    daemon: Literal["on", "off"] = "on"

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
        defaults = {
            "home": home,
            "database_url": self.database_url or f"sqlite:///{home / 'farm.db'}",
            "object_store": self.object_store or str(home / "objects"),
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
        return self.signing_key if self.signing_key is not None else self.home / "keys" / "signing.key"

    @property
    def signing_key_is_embedded(self) -> bool:
        """True when no key was configured, so the farm may generate one on first use."""
        return self.signing_key is None

    @property
    def trusted_signers_path(self) -> Path:
        """``FARM_TRUSTED_SIGNERS`` or ``<home>/keys/trusted_signers``."""
        if self.trusted_signers is not None:
            return self.trusted_signers
        return self.home / "keys" / "trusted_signers"

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
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it first
            folder.mkdir(mode=0o700)


def load_settings(**overrides: object) -> FarmSettings:
    """Read the settings from the environment; a bad value raises ``SettingsError`` naming it."""
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
