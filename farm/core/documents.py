"""The launcher documents, decoded strictly: Application, ClusterProfile and Package.

Unknown fields are refused at every level of the document structure (``properties`` and a
capability's ``rendering`` are free maps by design), apiVersion and kind are checked, and names
must be DNS-1123 subdomains. Errors name the file and the field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from farm.core import yamlio
from farm.core.errors import DocumentError
from farm.core.names import is_dns1123_subdomain

API_VERSION = "launcher.gokure.dev/v1alpha1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=False)


class Metadata(_Strict):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class Trait(_Strict):
    type: str = ""
    properties: dict[str, Any] | None = None


class Component(_Strict):
    name: str = ""
    type: str = ""
    properties: dict[str, Any] | None = None
    traits: list[Trait] | None = None
    annotations: dict[str, str] | None = None


class Policy(_Strict):
    name: str = ""
    type: str = ""
    properties: dict[str, Any] | None = None


class ApplicationSpec(_Strict):
    components: list[Component] | None = None
    policies: list[Policy] | None = None


class Application(_Strict):
    apiVersion: str = Field(default="")
    kind: str = ""
    metadata: Metadata = Field(default_factory=Metadata)
    spec: ApplicationSpec = Field(default_factory=ApplicationSpec)


class ProfileMetadata(_Strict):
    name: str = ""


class Capability(_Strict):
    rendering: dict[str, Any] | None = None


class ClusterProfileSpec(_Strict):
    gitopsEngine: str = ""
    capabilities: dict[str, Capability] | None = None


class ClusterProfile(_Strict):
    apiVersion: str = ""
    kind: str = ""
    metadata: ProfileMetadata = Field(default_factory=ProfileMetadata)
    spec: ClusterProfileSpec = Field(default_factory=ClusterProfileSpec)

    def capability(self, key: str) -> Capability | None:
        return (self.spec.capabilities or {}).get(key)


class PackageMetadata(_Strict):
    name: str = ""
    version: str = ""
    description: str = ""


class Parameter(_Strict):
    name: str = ""
    type: Literal["string", "integer", "boolean"] = "string"
    required: bool = False
    default: Any = None
    description: str = ""


class PackageSpec(_Strict):
    parameters: list[Parameter] | None = None


class Package(_Strict):
    apiVersion: str = ""
    kind: str = ""
    metadata: PackageMetadata = Field(default_factory=PackageMetadata)
    spec: PackageSpec = Field(default_factory=PackageSpec)


def _field_path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _describe_validation(exc: ValidationError, source: str, type_name: str) -> str:
    problems = []
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if p not in ("str", "int", "bool"))
        path = _field_path(loc)
        if error["type"] == "extra_forbidden":
            problems.append(f"{path}: field not found in type {type_name}")
        elif error["type"] == "literal_error":
            problems.append(f"{path}: {error['msg'].lower()}, got {error['input']!r}")
        else:
            problems.append(f"{path}: {error['msg'].lower()}")
    return f"{source}: " + "; ".join(problems)


def _decode(
    data: bytes | str, model: type[_Strict], source: str, type_name: str, memo: yamlio.DocumentMemo | None
) -> Any:
    try:
        raw = yamlio.load(data, source=source, memo=memo)
    except yamlio.YAMLError as exc:
        raise DocumentError(str(exc)) from None
    return _validate(raw, model, source, type_name)


def _validate(raw: Any, model: type[_Strict], source: str, type_name: str) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise DocumentError(f"{source}: document must be a mapping, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise DocumentError(_describe_validation(exc, source, type_name)) from None


def _check_header(doc: Any, kind: str, source: str) -> None:
    if doc.apiVersion != API_VERSION:
        raise DocumentError(f"{source}: unsupported apiVersion {doc.apiVersion!r} (expected {API_VERSION!r})")
    if doc.kind != kind:
        raise DocumentError(f"{source}: kind must be {kind!r}, got {doc.kind!r}")


def load_application(data: bytes | str, source: str = "app.yaml") -> Application:
    """Decode and validate an Application (structure only; component types are checked by the
    transform against the registry)."""
    try:
        raw = yamlio.load(data, source=source)
    except yamlio.YAMLError as exc:
        raise DocumentError(str(exc)) from None
    return load_application_data(raw, source)


def load_application_data(raw: Any, source: str = "app.yaml") -> Application:
    """Validate an already-parsed Application document (after parameter substitution)."""
    app: Application = _validate(raw, Application, source, "Application")
    _check_header(app, "Application", source)
    if not app.metadata.name:
        raise DocumentError(f"{source}: metadata.name is required")
    if not is_dns1123_subdomain(app.metadata.name):
        raise DocumentError(
            f"{source}: metadata.name {app.metadata.name!r} is not a valid DNS-1123 subdomain"
        )
    if app.metadata.namespace and not is_dns1123_subdomain(app.metadata.namespace):
        raise DocumentError(
            f"{source}: metadata.namespace {app.metadata.namespace!r} is not a valid DNS-1123 subdomain"
        )
    components = app.spec.components or []
    if not components:
        raise DocumentError(f"{source}: spec.components: at least one component is required")
    seen: set[str] = set()
    for index, component in enumerate(components):
        where = f"{source}: spec.components[{index}]"
        if not component.name:
            raise DocumentError(f"{where}.name is required")
        if not is_dns1123_subdomain(component.name):
            raise DocumentError(f"{where}.name {component.name!r} is not a valid DNS-1123 subdomain")
        if component.name in seen:
            raise DocumentError(f"{where}.name: duplicate component name {component.name!r}")
        seen.add(component.name)
        if not component.type:
            raise DocumentError(f"{where}.type is required")
        for t_index, trait in enumerate(component.traits or []):
            if not trait.type:
                raise DocumentError(f"{where}.traits[{t_index}].type is required")
    policy_names: set[str] = set()
    for index, policy in enumerate(app.spec.policies or []):
        where = f"{source}: spec.policies[{index}]"
        if not policy.name or not is_dns1123_subdomain(policy.name):
            raise DocumentError(f"{where}.name {policy.name!r} is not a valid DNS-1123 subdomain")
        if policy.name in policy_names:
            raise DocumentError(f"{where}.name: duplicate policy name {policy.name!r}")
        policy_names.add(policy.name)
        if not policy.type:
            raise DocumentError(f"{where}.type is required")
    return app


def load_cluster_profile(
    data: bytes | str, source: str = "cluster.yaml", memo: yamlio.DocumentMemo | None = None
) -> ClusterProfile:
    profile: ClusterProfile = _decode(data, ClusterProfile, source, "ClusterProfile", memo)
    _check_header(profile, "ClusterProfile", source)
    if not profile.metadata.name:
        raise DocumentError(f"{source}: metadata.name is required")
    if not is_dns1123_subdomain(profile.metadata.name):
        raise DocumentError(
            f"{source}: metadata.name {profile.metadata.name!r} is not a valid DNS-1123 subdomain"
        )
    if profile.spec.gitopsEngine not in ("", "fluxcd"):
        raise DocumentError(
            f'{source}: spec.gitopsEngine: unsupported engine {profile.spec.gitopsEngine!r} (only "fluxcd")'
        )
    profile.spec.gitopsEngine = "fluxcd"
    return profile


def load_package(
    data: bytes | str, source: str = "kurel.yaml", memo: yamlio.DocumentMemo | None = None
) -> Package:
    package: Package = _decode(data, Package, source, "Package", memo)
    _check_header(package, "Package", source)
    names: set[str] = set()
    for index, param in enumerate(package.spec.parameters or []):
        if not param.name:
            raise DocumentError(f"{source}: spec.parameters[{index}].name is required")
        if param.name in names:
            raise DocumentError(
                f"{source}: spec.parameters[{index}].name: duplicate parameter {param.name!r}"
            )
        names.add(param.name)
    return package
