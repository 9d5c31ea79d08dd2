"""Publishing to an OCI registry with the distribution API over HTTP (``httpx``).

One artifact per cluster, in the repository ``REPO/<cluster>``, tagged with the run id: its
layer is the cluster's manifests as a tar+gzip with Flux's media types, so Flux's
``OCIRepository`` reads it as it reads an artifact ``flux push artifact`` made. The DSSE envelopes
and the public keys are a second manifest whose ``subject`` is that artifact (an OCI 1.1
referrer), also tagged ``sha256-<digest>`` (the referrers tag schema), so a registry without the
referrers API still finds it.

Plain HTTP rather than oras-py: a publish is four calls of the distribution API (HEAD, POST+PUT
a blob, PUT a manifest), and the farm needs the manifest bytes it signs and compares exactly
(oras-py builds them for you from files on disk, and its ``subject`` support lags the spec).
Archives are byte-for-byte reproducible (sorted entries, zero times and owners), so the same
outputs give the same digests, and publishing them again pushes nothing new.

Credentials come from the settings (``FARM_PUBLISH_OCI_USERNAME``/``_PASSWORD``, the environment),
answered to the registry's Basic or Bearer challenge; never from the address.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from farm.publish.errors import PublishError
from farm.publish.layout import ClusterOutputs, key_files

FLUX_LAYER = "application/vnd.cncf.flux.content.v1.tar+gzip"
FLUX_CONFIG = "application/vnd.cncf.flux.config.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
EMPTY_CONFIG = "application/vnd.oci.empty.v1+json"
ENVELOPES_ARTIFACT = "application/vnd.dev.farm.envelopes.v1+json"
DSSE_ENVELOPE = "application/vnd.dsse.envelope.v1+json"
PEM = "application/x-pem-file"
TITLE = "org.opencontainers.image.title"
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _descriptor(media_type: str, data: bytes, title: str | None = None) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"mediaType": media_type, "digest": _digest(data), "size": len(data)}
    if title is not None:
        descriptor["annotations"] = {TITLE: title}
    return descriptor


def reproducible_tar_gz(files: dict[str, bytes]) -> bytes:
    """A tar+gzip of ``files`` whose bytes depend only on the names and contents."""
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            archive.addfile(info, io.BytesIO(files[name]))
    return gzip.compress(tar_bytes.getvalue(), mtime=0)


def _manifest(config: dict[str, Any], layers: list[dict[str, Any]], **extra: Any) -> bytes:
    body = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, **extra, "config": config, "layers": layers}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Artifact:
    """The two manifests of one cluster and every blob they name."""

    manifest: bytes
    envelopes: bytes
    blobs: dict[str, bytes]


def cluster_artifact(cluster: ClusterOutputs, public_keys: dict[str, str]) -> Artifact:
    layer = reproducible_tar_gz({f"{o.application}.yaml": o.manifests for o in cluster.outputs})
    config = b"{}"
    manifest = _manifest(
        _descriptor(FLUX_CONFIG, config),
        [_descriptor(FLUX_LAYER, layer)],
        annotations={"dev.farm.cluster": cluster.cluster},
    )
    attached = {f"{o.application}.intoto.json": (DSSE_ENVELOPE, o.envelope) for o in cluster.outputs}
    attached |= {name: (PEM, data) for name, data in key_files(public_keys).items()}
    empty = b"{}"
    envelopes = _manifest(
        _descriptor(EMPTY_CONFIG, empty),
        [_descriptor(kind, data, name) for name, (kind, data) in sorted(attached.items())],
        artifactType=ENVELOPES_ARTIFACT,
        subject=_descriptor(OCI_MANIFEST, manifest),
    )
    blobs = {_digest(data): data for data in [layer, config, empty, *(d for _, d in attached.values())]}
    return Artifact(manifest, envelopes, blobs)


class _RegistryAuth(httpx.Auth):
    """Answers a registry's challenge: Basic with the configured user, or Bearer with a token
    fetched from the challenge's realm (with the user, when one is configured)."""

    requires_response_body = True

    def __init__(self, username: str | None, password: str) -> None:
        self.basic = httpx.BasicAuth(username, password) if username else None
        self.token: str | None = None

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        if self.token is not None:
            request.headers["Authorization"] = f"Bearer {self.token}"
        response = yield request
        challenge = response.headers.get("WWW-Authenticate", "")
        scheme, _, rest = challenge.partition(" ")
        if response.status_code != 401:
            return
        if scheme.lower() == "basic" and self.basic is not None:
            yield from self.basic.auth_flow(request)
        elif scheme.lower() == "bearer":
            fields = dict(re.findall(r'(\w+)="([^"]*)"', rest))
            if "realm" not in fields:
                return
            token_request = httpx.Request(
                "GET", fields["realm"], params={k: v for k, v in fields.items() if k in ("service", "scope")}
            )
            if self.basic is not None:
                token_request = next(self.basic.auth_flow(token_request))
            answer = yield token_request
            body = answer.json() if answer.status_code == 200 else {}
            self.token = body.get("token") or body.get("access_token")
            if self.token:
                request.headers["Authorization"] = f"Bearer {self.token}"
                yield request


class _Registry:
    def __init__(self, address: str, username: str | None, password: str) -> None:
        host, _, self.repository = address.partition("/")
        if not host or not self.repository:
            raise PublishError("publish.destination", f"oci {address}: expected REGISTRY/REPO")
        scheme = "http" if host.split(":")[0] in LOOPBACK or host.startswith("[::1]") else "https"
        self.address = address
        self.logged_in = username is not None
        self.client = httpx.Client(
            base_url=f"{scheme}://{host}", auth=_RegistryAuth(username, password), timeout=60
        )

    def call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.client.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            raise PublishError(
                "publish.oci_failed", f"oci {self.address}: {type(error).__name__}: {error}", retryable=True
            ) from None
        if response.status_code in (401, 403):  # the challenge was answered: retrying cannot mend it
            raise self._refused(response)
        if response.status_code >= 400 and not (method == "HEAD" and response.status_code == 404):
            raise PublishError(
                "publish.oci_failed",
                f"oci {self.address}: {method} {url} answered {response.status_code}: {response.text[:300]}",
                retryable=True,
            )
        return response

    def _refused(self, response: httpx.Response) -> PublishError:
        """The registry's refusal of the login (or of anonymous access), naming the settings to
        check and never their values."""
        status = f"{response.status_code} {response.reason_phrase}"
        if self.logged_in:
            what = f"the registry refused the credentials ({status}): check"
        else:
            what = f"the registry requires a login ({status}): set"
        return PublishError(
            "publish.oci_unauthorized",
            f"oci {self.address}: {what} FARM_PUBLISH_OCI_USERNAME and FARM_PUBLISH_OCI_PASSWORD",
        )

    def put_blob(self, repository: str, digest: str, data: bytes) -> None:
        if self.call("HEAD", f"/v2/{repository}/blobs/{digest}").status_code == 200:
            return
        started = self.call("POST", f"/v2/{repository}/blobs/uploads/")
        location = started.headers["Location"]
        separator = "&" if "?" in location else "?"  # the location's query holds the upload's state
        self.call(
            "PUT",
            f"{location}{separator}digest={digest}",
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )

    def manifest_digest(self, repository: str, reference: str) -> str | None:
        found = self.call("HEAD", f"/v2/{repository}/manifests/{reference}", headers={"Accept": OCI_MANIFEST})
        return found.headers.get("Docker-Content-Digest") if found.status_code == 200 else None

    def put_manifest(self, repository: str, reference: str, manifest: bytes) -> None:
        self.call(
            "PUT",
            f"/v2/{repository}/manifests/{reference}",
            content=manifest,
            headers={"Content-Type": OCI_MANIFEST},
        )


@dataclass(frozen=True)
class OciPublished:
    reference: dict[str, str]  # cluster → REPO/<cluster>@sha256:…
    changed: bool


def publish_to_oci(
    address: str,
    run_id: str,
    published: list[ClusterOutputs],
    public_keys: dict[str, str],
    *,
    username: str | None = None,
    password: str = "",
) -> OciPublished:
    """Push one artifact per published cluster, tagged ``run_id``, with its envelopes attached."""
    registry = _Registry(address, username, password)
    reference, changed = {}, False
    try:
        for cluster in published:
            repository = f"{registry.repository}/{cluster.cluster}"
            artifact = cluster_artifact(cluster, public_keys)
            digest = _digest(artifact.manifest)
            reference[cluster.cluster] = f"{address}/{cluster.cluster}@{digest}"
            if registry.manifest_digest(repository, run_id) == digest:
                continue
            changed = True
            for blob_digest, data in artifact.blobs.items():
                registry.put_blob(repository, blob_digest, data)
            registry.put_manifest(repository, digest, artifact.manifest)
            registry.put_manifest(repository, run_id, artifact.manifest)
            referrers_tag = digest.replace(":", "-")
            registry.put_manifest(repository, referrers_tag, artifact.envelopes)
    finally:
        registry.client.close()
    return OciPublished(reference, changed)
