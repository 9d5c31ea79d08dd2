"""External Secrets Operator kind components: secretstore, clustersecretstore, externalsecret and
clusterexternalsecret (seed 002, their entry). Beside the strict decode: reference names and the
fields the API would default but the type always writes, the exactly-one-provider rule, a generator
as the source of one data key, target.manifest, and the explicit-secret policy on inline credentials."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import externalsecrets as types
from farm.core.kinds.engine import KindContext, ListOf, Struct, join, kind_component
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_UNREADABLE_OBJECT, refuse

ESO_V1 = "external-secrets.io/v1"

INLINE_CREDENTIALS = (
    "beyondtrust.auth.apiKey",
    "beyondtrust.auth.certificateKey",
    "beyondtrust.auth.clientSecret",
    "delinea.clientSecret",
    "scaleway.secretKey",
    "secretserver.password",
    "secretserver.token",
)

# The kinds the rendered-object check reads, by (group, kind): the operator would write one whose
# content is not known at build.
POLICY_READ_KINDS = frozenset(
    {
        ("", kind)
        for kind in (
            "Pod",
            "PodTemplate",
            "ReplicationController",
            "PersistentVolumeClaim",
            "PersistentVolume",
        )
    }
    | {("apps", kind) for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")}
    | {("batch", "Job"), ("batch", "CronJob"), ("autoscaling", "HorizontalPodAutoscaler")}
)

_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def _authored_fields(struct: Struct, authored: dict[str, Any]) -> dict[str, Any]:
    """Authored values by JSON field name (keys match case-insensitively, as in the decode)."""
    out = {}
    for key, value in authored.items():
        target = struct.lookup(str(key))
        if target is not None and value is not None:
            out[target.name] = value
    return out


def _walk(
    struct: Struct, authored: dict[str, Any], path: str
) -> Iterator[tuple[Struct, dict[str, Any], str]]:
    """Every authored object under ``struct``, with the struct it decodes into and its path."""
    yield struct, authored, path
    for f in struct.fields:
        value = _authored_fields(struct, authored).get(f.name)
        if isinstance(f.type, Struct) and isinstance(value, dict):
            yield from _walk(f.type, value, join(path, f.name))
        elif isinstance(f.type, ListOf) and isinstance(f.type.item, Struct) and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    yield from _walk(f.type.item, item, f"{join(path, f.name)}[{index}]")


def _check_written_unauthored(struct: Struct, authored: dict[str, Any], path: str) -> None:
    for node, fields_authored, where in _walk(struct, authored, path):
        fields = _authored_fields(node, fields_authored)
        if node.name in types.REFERENCE_STRUCTS and "name" not in fields:
            raise FieldError(
                f"{join(where, 'name')}: required (the external-secrets API requires the name of what this refers to)"
            )
        for (struct_name, key), default in types.WRITTEN_DEFAULTS.items():
            if node.name == struct_name and key not in fields:
                raise FieldError(
                    f"{join(where, key)}: required (the object always carries this field, so the external-secrets "
                    f"API's default {default} never applies: write the value)"
                )


def _dig(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _check_store(kc: KindContext) -> None:
    _check_written_unauthored(types.SECRET_STORE_SPEC, kc.authored, "")
    provider = kc.decoded["provider"] or {}
    if not provider:
        raise FieldError("provider: configures no provider; the API takes exactly one")
    if len(provider) > 1:
        raise FieldError(
            f"provider: configures {len(provider)} providers ({', '.join(sorted(provider))}); the API takes exactly one"
        )
    if kc.build.policy.explicit_secrets_allowed:
        return
    for dotted in INLINE_CREDENTIALS:
        if _dig(provider, f"{dotted}.value"):
            raise refuse(
                f"provider.{dotted}.value: holds the credential in the object, and the environment policy forbids "
                f"explicit secrets; name the key of a Secret created out of band in provider.{dotted}.secretRef instead",
                REFUSAL_EXPLICIT_SECRET,
            )
    if _dig(provider, "fake.data"):
        raise refuse(
            "provider.fake.data: holds the values the store serves in the object, and the environment policy "
            "forbids explicit secrets; serve them from a provider that reads a Secret created out of band",
            REFUSAL_EXPLICIT_SECRET,
        )


def _manifest_group(api_version: str, path: str) -> str:
    group, slash, version = api_version.rpartition("/")
    valid = _DNS1035_LABEL.match(version) is not None and len(version) <= 63
    if slash:
        valid = valid and _DNS1123_SUBDOMAIN.match(group) is not None and len(group) <= 253
    if not valid:
        raise FieldError(
            f'{path}.apiVersion: "{api_version}" is no API version: want a version (v1) or a group and a '
            "version (apps/v1)"
        )
    return group


def _check_manifest(spec: dict[str, Any], path: str, kc: KindContext) -> None:
    manifest = (spec.get("target") or {}).get("manifest")
    if manifest is None:
        return
    where = f"{path}target.manifest"
    group = _manifest_group(manifest["apiVersion"], where)
    kind = manifest["kind"]
    if (group, kind) in POLICY_READ_KINDS:
        raise refuse(
            f"{where}: the operator would write a {kind}, a kind the environment policy checks, and what the "
            "object would hold is not known at build, so it cannot be checked against environment policy",
            REFUSAL_UNREADABLE_OBJECT,
        )
    if (group, kind) == ("", "Secret") and not kc.build.policy.explicit_secrets_allowed:
        raise refuse(
            f"{where}: the operator would write a Secret from what the object holds, and the environment policy "
            "forbids explicit secrets",
            REFUSAL_EXPLICIT_SECRET,
        )


def _check_external_secret_spec(spec: dict[str, Any], path: str, kc: KindContext) -> None:
    for index, data in enumerate(spec.get("data") or []):
        if (data.get("sourceRef") or {}).get("generatorRef") is not None:
            raise FieldError(
                f"{path}data[{index}].sourceRef.generatorRef: cannot be carried: the API takes exactly one of "
                "storeRef and generatorRef here, and the object always carries a storeRef; read from a generator "
                "with dataFrom[].sourceRef.generatorRef"
            )
    _check_manifest(spec, path, kc)


def _check_external_secret(kc: KindContext) -> None:
    _check_external_secret_spec(kc.decoded, "", kc)


def _check_cluster_external_secret(kc: KindContext) -> None:
    _check_external_secret_spec(kc.decoded["externalSecretSpec"], "externalSecretSpec.", kc)


def _store(name: str, kind: str, cluster_scoped: bool) -> Any:
    return kind_component(
        name,
        ESO_V1,
        kind,
        "esv1.SecretStoreSpec",
        spec=types.SECRET_STORE_SPEC,
        api=types.EXTERNAL_SECRETS,
        cluster_scoped=cluster_scoped,
        check=_check_store,
    )


SECRET_STORE = _store("secretstore", "SecretStore", cluster_scoped=False)
CLUSTER_SECRET_STORE = _store("clustersecretstore", "ClusterSecretStore", cluster_scoped=True)

EXTERNAL_SECRET = kind_component(
    "externalsecret",
    ESO_V1,
    "ExternalSecret",
    "esv1.ExternalSecretSpec",
    spec=types.EXTERNAL_SECRET_SPEC,
    api=types.EXTERNAL_SECRETS,
    check=_check_external_secret,
)

CLUSTER_EXTERNAL_SECRET = kind_component(
    "clusterexternalsecret",
    ESO_V1,
    "ClusterExternalSecret",
    "esv1.ClusterExternalSecretSpec",
    spec=types.CLUSTER_EXTERNAL_SECRET_SPEC,
    api=types.EXTERNAL_SECRETS,
    cluster_scoped=True,
    check=_check_cluster_external_secret,
)
