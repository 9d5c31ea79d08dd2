"""Reading a catalog folder: every document validated, every problem reported with its file.

A broken fleet.yaml stops the load (:class:`CatalogError` lists every problem). A broken
application or ClusterProfile does not: it is kept in the snapshot with its :class:`Problem`, the
jobs that need it fail with that error, and every other target still renders.
"""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from farm.catalog.fleet import Fleet, TargetRule, parse_fleet
from farm.catalog.snapshot import ApplicationEntry, CatalogSnapshot, ClusterEntry, Problem, Target
from farm.core import yamlio
from farm.core.documents import load_application, load_cluster_profile, load_package
from farm.core.errors import CoreError
from farm.profiles import Declaration, ProfileError, parse_declaration, parse_selection, resolve


class CatalogError(Exception):
    """A catalog that cannot be read at all; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _read_optional(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _check_application(folder: Path, root: Path, app_yaml: bytes, package: bytes | None) -> Problem | None:
    app_file = _relative(folder / "app.yaml", root)
    try:
        if package is not None:
            load_package(package, source=_relative(folder / "kurel.yaml", root))
            yamlio.load(app_yaml, source=app_file)  # parameters are checked when the target renders
        else:
            app = load_application(app_yaml, source=app_file)
            if app.metadata.name != folder.name:
                return Problem(
                    app_file,
                    "invalid_document",
                    f"{app_file}: metadata.name {app.metadata.name!r} must match its folder name {folder.name!r}",
                )
    except (CoreError, yamlio.YAMLError) as exc:
        code = getattr(exc, "code", "invalid_document")
        return Problem(app_file, code, str(exc))
    return None


def _load_application(folder: Path, root: Path) -> ApplicationEntry:
    app_yaml = (folder / "app.yaml").read_bytes()
    package = _read_optional(folder / "kurel.yaml")
    values = _read_optional(folder / "values.yaml")
    cluster_values = tuple(
        sorted((path.stem, path.read_bytes()) for path in (folder / "values").glob("*.yaml"))
    )
    if (values is not None or cluster_values) and package is None:
        problem: Problem | None = Problem(
            _relative(folder, root),
            "invalid_parameters",
            f"{_relative(folder, root)}: values files need a kurel.yaml declaring parameters",
        )
    else:
        problem = _check_application(folder, root, app_yaml, package)
    return ApplicationEntry(folder.name, app_yaml, package, values, cluster_values, problem)


def _load_cluster(path: Path, root: Path) -> tuple[ClusterEntry, str]:
    data = path.read_bytes()
    source = _relative(path, root)
    try:
        profile = load_cluster_profile(data, source=source)
    except CoreError as exc:
        return ClusterEntry(path.stem, data, Problem(source, exc.code, exc.message)), path.stem
    return ClusterEntry(profile.metadata.name, data), profile.metadata.name


def _expand_targets(
    rules: list[TargetRule], applications: list[str], clusters: list[str]
) -> tuple[list[Target], list[str]]:
    targets: dict[tuple[str, str], Target] = {}
    warnings = []
    for index, rule in enumerate(rules):
        matched = 0
        for app in applications:
            if not any(fnmatchcase(app, pattern) for pattern in rule.applications):
                continue
            for cluster in clusters:
                if not any(fnmatchcase(cluster, pattern) for pattern in rule.clusters):
                    continue
                if any(
                    fnmatchcase(app, e.application) and fnmatchcase(cluster, e.cluster) for e in rule.exclude
                ):
                    continue
                targets[(app, cluster)] = Target(app, cluster, rule.namespace, rule.profile or "")
                matched += 1
        if matched == 0:
            warnings.append(f"fleet.yaml: spec.targets[{index}] matches no (application, cluster) pair")
    return sorted(targets.values()), warnings


def load_catalog(path: str | Path) -> CatalogSnapshot:
    """Read the catalog at ``path`` (a folder holding fleet.yaml, or the fleet.yaml itself)."""
    root = Path(path)
    fleet_file = root if root.is_file() else root / "fleet.yaml"
    root = fleet_file.parent
    if not fleet_file.is_file():
        raise CatalogError([f"{fleet_file}: no fleet.yaml found"])
    fleet_yaml = fleet_file.read_bytes()
    fleet, problems = parse_fleet(fleet_yaml, "fleet.yaml")
    if fleet is None:
        raise CatalogError(problems)
    return _load_contents(root, fleet, fleet_yaml)


def _load_contents(root: Path, fleet: Fleet, fleet_yaml: bytes) -> CatalogSnapshot:
    fatal: list[str] = []
    apps_dir, clusters_dir = root / fleet.spec.applications, root / fleet.spec.clusters
    if not apps_dir.is_dir():
        fatal.append(f"fleet.yaml: spec.applications: folder {fleet.spec.applications!r} does not exist")
    if not clusters_dir.is_dir():
        fatal.append(f"fleet.yaml: spec.clusters: folder {fleet.spec.clusters!r} does not exist")
    if fatal:
        raise CatalogError(fatal)
    applications = [
        _load_application(folder, root)
        for folder in sorted(p for p in apps_dir.iterdir() if (p / "app.yaml").is_file())
    ]
    clusters: list[ClusterEntry] = []
    seen: dict[str, str] = {}
    for file in sorted(clusters_dir.glob("*.yaml")):
        entry, name = _load_cluster(file, root)
        if name in seen:
            fatal.append(
                f"{_relative(file, root)}: ClusterProfile {name!r} is already defined in {seen[name]}"
            )
        seen[name] = _relative(file, root)
        clusters.append(entry)
    if fatal:
        raise CatalogError(fatal)
    profile_documents: tuple[tuple[str, bytes], ...] = ()
    if fleet.spec.profiles:
        profiles_dir = root / fleet.spec.profiles
        profile_documents = tuple(
            (_relative(p, root), p.read_bytes()) for p in sorted(profiles_dir.glob("*.yaml"))
        )
    declarations = _load_declarations(profile_documents, seen)
    targets, _ = _expand_targets(
        list(fleet.spec.targets), [a.name for a in applications], [c.name for c in clusters]
    )
    targets, refused = _with_selections(targets, declarations, {c.name: c for c in clusters})
    problems = tuple(e.problem for e in [*applications, *clusters] if e.problem is not None)
    problems += tuple(refused)
    return CatalogSnapshot(
        name=fleet.metadata.name,
        fleet_yaml=fleet_yaml,
        applications=tuple(applications),
        clusters=tuple(clusters),
        targets=tuple(targets),
        problems=problems,
        profile_documents=profile_documents,
    )


def _load_declarations(
    documents: tuple[tuple[str, bytes], ...], clusters: dict[str, str]
) -> dict[str, Declaration]:
    """Every declaration, checked: one per ClusterProfile, each naming a known ClusterProfile."""
    declarations: dict[str, Declaration] = {}
    fatal: list[str] = []
    for source, data in documents:
        try:
            declaration = parse_declaration(data, source)
        except ProfileError as exc:
            fatal.append(str(exc))
            continue
        cluster = declaration.cluster_profile
        if cluster not in clusters:
            fatal.append(
                f"{source}: spec.clusterProfile: no ClusterProfile {cluster!r} in the catalog"
                " [profile.unknown_cluster_profile]"
            )
        elif cluster in declarations:
            fatal.append(
                f"{source}: ClusterProfile {cluster!r} already has a declaration in"
                f" {declarations[cluster].source} [profile.duplicate_declaration]"
            )
        else:
            declarations[cluster] = declaration
    if fatal:
        raise CatalogError(fatal)
    return declarations


def _with_selections(
    targets: list[Target], declarations: dict[str, Declaration], clusters: dict[str, ClusterEntry]
) -> tuple[list[Target], list[Problem]]:
    """Each target of a profiled ClusterProfile carries its selection (the default when none).
    A target whose selection does not resolve is refused with its own problem; the others go on."""
    result, refused = [], []
    for target in targets:
        declaration = declarations.get(target.cluster)
        if declaration is not None and not target.selection:
            target = replace(target, selection=f"{declaration.name}={declaration.default}")
        if target.selection and clusters[target.cluster].problem is None:
            try:
                resolve(
                    clusters[target.cluster].profile_yaml,
                    f"{target.cluster}.yaml",
                    declaration,
                    parse_selection(target.selection, source="fleet.yaml: profile"),
                )
            except ProfileError as exc:
                message = f"fleet.yaml: target {target.application} on {target.cluster} refused: {exc}"
                refused.append(Problem("fleet.yaml", exc.code, message))
                continue
        result.append(target)
    return result, refused


def target_warnings(snapshot: CatalogSnapshot, fleet: Fleet) -> list[str]:
    """Target rules that select nothing (a likely typo in a glob)."""
    _, warnings = _expand_targets(
        list(fleet.spec.targets), [a.name for a in snapshot.applications], [c.name for c in snapshot.clusters]
    )
    return warnings
