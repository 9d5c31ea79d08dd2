"""cnpg-database: a CloudNativePG Database (postgresql.cnpg.io/v1), the DatabaseSpec decoded
strictly. cluster.name, name and owner are required; the names PostgreSQL reserves are refused;
the ensure of each schema, extension, fdw and server is written present where unauthored."""

from __future__ import annotations

from typing import Any

from farm.core.components.cnpg_common import CNPG_API, check_cluster_name
from farm.core.errors import FieldError
from farm.core.kinds.engine import (
    BOOL,
    INT64,
    STRING,
    Api,
    F,
    KindContext,
    Struct,
    decode_struct,
    kind_component,
    list_of,
)

CNPG = Api("CloudNativePG", "the operator")
RESERVED_DATABASES = ("postgres", "template0", "template1")
ENSURE_VALUES = ("present", "absent")

CLUSTER_REFERENCE = Struct("LocalObjectReference", [F("name", STRING, "omit req")])
_ENSURE = F("ensure", STRING)
OPTION_SPEC = Struct("OptionSpec", [F("name", STRING, "req"), F("value", STRING, "req"), _ENSURE])
USAGE_SPEC = Struct("UsageSpec", [F("name", STRING, "req"), F("type", STRING, "omit")])
SCHEMA_SPEC = Struct("SchemaSpec", [F("name", STRING, "req"), _ENSURE, F("owner", STRING, "omit")])
EXTENSION_SPEC = Struct(
    "ExtensionSpec",
    [F("name", STRING, "req"), _ENSURE, F("version", STRING, "omit"), F("schema", STRING, "omit")],
)
FDW_SPEC = Struct(
    "FDWSpec",
    [
        F("name", STRING, "req"),
        _ENSURE,
        F("handler", STRING, "omit"),
        F("validator", STRING, "omit"),
        F("owner", STRING, "omit"),
        F("options", list_of(OPTION_SPEC), "omit"),
        F("usage", list_of(USAGE_SPEC), "omit"),
    ],
)
SERVER_SPEC = Struct(
    "ServerSpec",
    [
        F("name", STRING, "req"),
        _ENSURE,
        F("fdw", STRING, "req"),
        F("options", list_of(OPTION_SPEC), "omit"),
        F("usage", list_of(USAGE_SPEC), "omit"),
    ],
)
DATABASE_SPEC = Struct(
    "DatabaseSpec",
    [
        F("cluster", CLUSTER_REFERENCE, "req"),
        F("ensure", STRING, "omit"),
        F("name", STRING, "req"),
        F("owner", STRING, "req"),
        F("template", STRING, "omit"),
        F("encoding", STRING, "omit"),
        F("locale", STRING, "omit"),
        F("localeProvider", STRING, "omit"),
        F("localeCollate", STRING, "omit"),
        F("localeCType", STRING, "omit"),
        F("icuLocale", STRING, "omit"),
        F("icuRules", STRING, "omit"),
        F("builtinLocale", STRING, "omit"),
        F("collationVersion", STRING, "omit"),
        F("isTemplate", BOOL, "omit ptr"),
        F("allowConnections", BOOL, "omit ptr"),
        F("connectionLimit", INT64, "omit ptr"),
        F("tablespace", STRING, "omit"),
        F("databaseReclaimPolicy", STRING, "omit"),
        F("schemas", list_of(SCHEMA_SPEC), "omit"),
        F("extensions", list_of(EXTENSION_SPEC), "omit"),
        F("fdws", list_of(FDW_SPEC), "omit"),
        F("servers", list_of(SERVER_SPEC), "omit"),
    ],
)
_ENSURED_LISTS = ("schemas", "extensions", "fdws", "servers")


def check_database_name(name: str, path: str) -> None:
    if name in RESERVED_DATABASES:
        raise FieldError(f'{path}: "{name}" is reserved by PostgreSQL, and the Database CRD refuses it')


def _default_ensure(spec: dict[str, Any]) -> None:
    """ensure has no omitempty and a CRD default of present: written present where unauthored."""
    for key in _ENSURED_LISTS:
        for item in spec.get(key) or []:
            if item.get("ensure") == "":
                item["ensure"] = "present"
            for option in item.get("options") or []:
                if option.get("ensure") == "":
                    option["ensure"] = "present"


def _check_authored_ensure(props: dict[str, Any], path: str) -> None:
    for key in _ENSURED_LISTS:
        items = props.get(key)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if isinstance(item, dict) and item.get("ensure") == "":
                raise FieldError(
                    f'{path}{key}[{index}].ensure: "" is refused by the Database CRD, which takes present or '
                    "absent; omit it to take present"
                )


def database_spec(props: dict[str, Any], path: str = "") -> dict[str, Any]:
    """The decoded DatabaseSpec with its checks; ``path`` prefixes messages (a postgresql entry)."""
    prefix = f"{path}." if path else ""
    _check_authored_ensure(props, prefix)
    spec = decode_struct(props, DATABASE_SPEC, path, CNPG)
    check_cluster_name(spec["cluster"].get("name", ""), f"{prefix}cluster.name")
    check_database_name(spec["name"], f"{prefix}name")
    _default_ensure(spec)
    return spec


def _check(ctx: KindContext) -> None:
    ctx.obj["spec"] = database_spec(ctx.authored)


HANDLER = kind_component(
    "cnpg-database", CNPG_API, "Database", "cnpgv1.DatabaseSpec", spec=DATABASE_SPEC, api=CNPG, check=_check
)
