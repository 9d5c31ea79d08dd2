"""The ``fleet.yaml`` document, decoded strictly.

```yaml
apiVersion: farm.dev/v1alpha1
kind: Fleet
metadata: {name: example}
spec:
  applications: applications   # one folder per application: app.yaml, optional kurel.yaml,
                               # values.yaml, and values/<cluster>.yaml for one cluster
  clusters: clusters           # one ClusterProfile per *.yaml file
  profiles: profiles           # optional: configuration profile documents
  targets:
    - applications: ["*"]      # glob patterns over application names
      clusters: ["prod-*"]     # glob patterns over ClusterProfile names
      exclude:                 # optional: pairs this rule leaves out
        - {application: legacy-*, cluster: prod-eu}
      namespace: shop          # optional: the namespace flag for these targets
      profile: ingress-mode=gateway  # optional: a configuration profile selection
```
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from farm.core import yamlio

FLEET_API_VERSION = "farm.dev/v1alpha1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class FleetMetadata(_Strict):
    name: str = ""


class TargetExclusion(_Strict):
    application: str = "*"
    cluster: str = "*"


class TargetRule(_Strict):
    applications: list[str] = Field(default_factory=lambda: ["*"])
    clusters: list[str] = Field(default_factory=lambda: ["*"])
    exclude: list[TargetExclusion] = Field(default_factory=list)
    namespace: str | None = None
    profile: str | None = None  # a selection ``name=value``; the declaration's default otherwise


class FleetSpec(_Strict):
    applications: str = "applications"
    clusters: str = "clusters"
    profiles: str | None = None
    targets: list[TargetRule] = Field(default_factory=list)


class Fleet(_Strict):
    apiVersion: str = ""
    kind: str = ""
    metadata: FleetMetadata = Field(default_factory=FleetMetadata)
    spec: FleetSpec = Field(default_factory=FleetSpec)


def _path(loc: tuple) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def parse_fleet(data: bytes, source: str) -> tuple[Fleet | None, list[str]]:
    """The decoded Fleet, or None with every problem found (each naming ``source`` and the field)."""
    try:
        raw = yamlio.load(data, source=source)
    except yamlio.YAMLError as exc:
        return None, [str(exc)]
    if not isinstance(raw, dict):
        return None, [f"{source}: document must be a mapping"]
    try:
        fleet = Fleet.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = _path(tuple(error["loc"]))
            if error["type"] == "extra_forbidden":
                problems.append(f"{source}: {where}: unknown field")
            else:
                problems.append(f"{source}: {where}: {error['msg'].lower()}")
        return None, problems
    problems = []
    if fleet.apiVersion != FLEET_API_VERSION:
        problems.append(f"{source}: apiVersion must be {FLEET_API_VERSION!r}, got {fleet.apiVersion!r}")
    if fleet.kind != "Fleet":
        problems.append(f"{source}: kind must be 'Fleet', got {fleet.kind!r}")
    if not fleet.metadata.name:
        problems.append(f"{source}: metadata.name is required")
    if not fleet.spec.targets:
        problems.append(f"{source}: spec.targets: at least one target rule is required")
    return (fleet if not problems else None), problems
