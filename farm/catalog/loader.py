"""Reading a catalog folder: every document validated, every problem reported with its file.

A broken fleet.yaml stops the load (:class:`CatalogError` lists every problem). A broken
application or ClusterProfile does not: it is kept in the snapshot with its :class:`Problem`, the
jobs that need it fail with that error, and every other target still renders.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from farm.allocation import gc_paused
from farm.catalog.charts import (
    ChartProblem,
    ChartSource,
    HelmRepositories,
    application_charts,
    chart_references,
)
from farm.catalog.fleet import Fleet, TargetRule, parse_fleet
from farm.catalog.snapshot import ApplicationEntry, CatalogSnapshot, ClusterEntry, Problem, Target
from farm.core import yamlio
from farm.core.documents import load_application, load_cluster_profile, load_package
from farm.core.errors import CoreError, DocumentError, bound_message
from farm.core.names import is_dns1123_subdomain
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


MAX_FILE_BYTES = 4 * 1024 * 1024  # a catalog document larger than this is refused


class UnsafeFile(Exception):
    """A catalog file that is not a regular file inside the catalog, or is too large."""

    def __init__(self, source: str, why: str) -> None:
        super().__init__(f"{source}: {why}")
        self.source = source


def read_catalog_file(path: Path, root: Path, limit: int | None = None) -> bytes:
    """The bytes of one regular file, opened without following a symlink, checked after opening.

    ``O_NONBLOCK`` keeps a FIFO from hanging the open; ``fstat`` on the open descriptor (no
    TOCTOU) refuses anything that is not a regular file, and the read stops past ``limit``.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    source = _relative(path, root)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UnsafeFile(source, "does not exist") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeFile(source, "is a symbolic link; a catalog reads only its own files") from None
        raise UnsafeFile(source, f"cannot be read ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(source, "is not a regular file")
        if info.st_size > limit:
            raise UnsafeFile(
                source, f"is {info.st_size} bytes, over the {limit}-byte limit for a catalog file"
            )
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
        if len(data) > limit:
            raise UnsafeFile(source, f"is over the {limit}-byte limit for a catalog file")
        return data
    finally:
        os.close(fd)


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to the catalog, printable: bytes that are not UTF-8 shown as ``\\xNN``."""
    return _escaped(_relative(path, root))


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.listdir gave undecodable bytes as surrogates
        return False
    return True


def _not_utf8(path: Path, root: Path) -> Problem:
    shown = _shown(path, root)
    return Problem(
        shown,
        "catalog.unsafe_file",
        f"{shown}: the name is not UTF-8; rename it (catalog names must be UTF-8)",
    )


def _misnamed_application(folder: Path, root: Path) -> ApplicationEntry:
    """An application folder whose name is not UTF-8: refused under its escaped name, so its
    targets fail naming it and the other applications still render."""
    return ApplicationEntry(_escaped(folder.name), b"", None, None, (), _not_utf8(folder, root))


def _misnamed_cluster(file: Path, root: Path) -> tuple[ClusterEntry, str]:
    """A ClusterProfile file whose name is not UTF-8: refused under its escaped stem, so the
    targets on it fail naming it and the other clusters still render."""
    name = _escaped(file.stem)
    return ClusterEntry(name, b"", _not_utf8(file, root)), name


def _escaped(name: str) -> str:
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _escaped_name_clashes(names: list[str], apps_folder: str) -> list[str]:
    """A folder whose escaped name is another folder's name (``caf\\xe9`` spelled out) would make
    two applications of one name."""
    return [
        f"{apps_folder}/{name}: two application folders have this name once bytes that are not"
        " UTF-8 are escaped; rename one"
        for name in sorted({n for n in names if names.count(n) > 1})
    ]


def _read_optional(path: Path, root: Path, limit: int) -> bytes | None:
    return read_catalog_file(path, root, limit) if os.path.lexists(path) else None


def _check_application(folder: Path, root: Path, app_yaml: bytes, package: bytes | None) -> Problem | None:
    """The application's documents, decoded; its ``metadata.name`` must be the folder's name, with
    or without a kurel.yaml (a packaged application's parameters are checked when it renders)."""
    app_file = _relative(folder / "app.yaml", root)
    try:
        if package is not None:
            load_package(package, source=_relative(folder / "kurel.yaml", root))
            name = _packaged_name(yamlio.load(app_yaml, source=app_file), app_file)
        else:
            name = load_application(app_yaml, source=app_file).metadata.name
    except (CoreError, yamlio.YAMLError) as exc:
        code = getattr(exc, "code", "document.invalid")
        return Problem(app_file, code, str(exc))
    if name != folder.name:
        return Problem(
            app_file,
            "document.invalid",
            bound_message(f"{app_file}: metadata.name {name!r} must match its folder name {folder.name!r}"),
        )
    return None


def _packaged_name(raw: object, source: str) -> str:
    """The ``metadata.name`` of a packaged application, checked as an unpackaged one's is: a
    parameter cannot name it, since the folder does."""
    metadata = raw.get("metadata") if isinstance(raw, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        raise DocumentError(f"{source}: metadata.name is required")
    if not is_dns1123_subdomain(name):
        raise DocumentError(f"{source}: metadata.name {name!r} is not a valid DNS-1123 subdomain")
    return name


def _missing_app_yaml(folder: Path, root: Path) -> Problem:
    source = _relative(folder / "app.yaml", root)
    found = sorted(p.name for p in folder.iterdir() if _is_utf8(p.name)) if folder.is_dir() else []
    holds = f"; the folder holds {', '.join(found[:5])}" if found else "; the folder is empty"
    return Problem(
        source,
        "catalog.missing_file",
        f"{source}: does not exist: every folder of spec.applications is an application"
        f" (add app.yaml or remove the folder){holds}",
    )


APPLICATION_FILES = frozenset({"app.yaml", "kurel.yaml", "values.yaml"})
_YAML_SUFFIXES = (".yaml", ".yml")


def _unread_yaml(folder: Path, root: Path, read: frozenset[str] | None) -> list[str]:
    """A warning for each YAML-looking file of ``folder`` the loader does not read: any ``.yml``,
    ``.YAML``…, and, where ``read`` names the files read, any other ``.yaml``."""
    warnings = []
    for path in sorted(folder.iterdir()):
        name = path.name
        if not name.lower().endswith(_YAML_SUFFIXES) or (name.endswith(".yaml") and read is None):
            continue
        if read is not None and name in read:
            continue
        if read is None:
            why = f"only files named *.yaml are read here (rename it to {_escaped(path.stem)}.yaml)"
        else:
            why = "an application folder reads only app.yaml, kurel.yaml, values.yaml and values/*.yaml"
        warnings.append(f"{_shown(path, root)}: not read: {why}")
    return warnings


def _later_documents(files: Sequence[tuple[str, bytes | None]]) -> list[str]:
    """A warning for each file holding a second YAML document: only the first is read."""
    return [
        f"{source}: holds more than one YAML document; only the first is read"
        for source, data in files
        if data is not None and yamlio.has_later_document(data)
    ]


def read_application(folder: Path, root: Path, limit: int, warnings: list[str]) -> ApplicationEntry:
    """The application in ``folder`` (its files read, its documents checked), the warnings about
    its files added to ``warnings``. It reads nothing outside ``folder``."""
    try:
        if folder.is_symlink():
            raise UnsafeFile(
                _relative(folder, root), "is a symbolic link; a catalog reads only its own files"
            )
        if not os.path.lexists(folder / "app.yaml"):
            return ApplicationEntry(folder.name, b"", None, None, (), _missing_app_yaml(folder, root))
        app_yaml = read_catalog_file(folder / "app.yaml", root, limit)
        package = _read_optional(folder / "kurel.yaml", root, limit)
        values = _read_optional(folder / "values.yaml", root, limit)
        values_dir = folder / "values"
        if values_dir.is_symlink():
            raise UnsafeFile(
                _relative(values_dir, root), "is a symbolic link; a catalog reads only its own files"
            )
        value_files = sorted(values_dir.glob("*.yaml"))
        misnamed = next((path for path in value_files if not _is_utf8(path.name)), None)
        if misnamed is not None:
            problem = _not_utf8(misnamed, root)
            return ApplicationEntry(folder.name, b"", None, None, (), problem)
        cluster_values = tuple((path.stem, read_catalog_file(path, root, limit)) for path in value_files)
        warnings += _unread_yaml(folder, root, APPLICATION_FILES)
        if values_dir.is_dir():
            warnings += _unread_yaml(values_dir, root, None)
        warnings += _later_documents(
            [
                (_relative(folder / "app.yaml", root), app_yaml),
                (_relative(folder / "kurel.yaml", root), package),
                (_relative(folder / "values.yaml", root), values),
                *((_relative(values_dir / f"{name}.yaml", root), data) for name, data in cluster_values),
            ]
        )
    except UnsafeFile as error:
        return ApplicationEntry(
            folder.name, b"", None, None, (), Problem(error.source, "catalog.unsafe_file", str(error))
        )
    if (values is not None or cluster_values) and package is None:
        problem: Problem | None = Problem(
            _relative(folder, root),
            "parameters.invalid",
            f"{_relative(folder, root)}: values files need a kurel.yaml declaring parameters",
        )
    else:
        problem = _check_application(folder, root, app_yaml, package)
    return ApplicationEntry(folder.name, app_yaml, package, values, cluster_values, problem)


def _values_for_unknown_clusters(
    applications: list[ApplicationEntry], clusters: set[str], apps_folder: str
) -> list[ApplicationEntry]:
    """An application whose ``values/<cluster>.yaml`` names no ClusterProfile of the catalog is
    refused (a typo would otherwise drop that cluster's values silently)."""
    checked = []
    for app in applications:
        unknown = sorted(name for name, _ in app.cluster_values if name not in clusters)
        if app.problem is None and unknown:
            source = f"{apps_folder}/{app.name}/values/{unknown[0]}.yaml"
            message = (
                f"{source}: no ClusterProfile {unknown[0]!r} in the catalog; a values file is named"
                " after the cluster it applies to (rename or remove it)"
            )
            app = replace(app, problem=Problem(source, "parameters.invalid", message))
        checked.append(app)
    return checked


def _load_cluster(path: Path, root: Path, limit: int) -> tuple[ClusterEntry, str]:
    source = _relative(path, root)
    try:
        data = read_catalog_file(path, root, limit)
    except UnsafeFile as error:
        return ClusterEntry(path.stem, b"", Problem(source, "catalog.unsafe_file", str(error))), path.stem
    return cluster_entry(data, source, path.stem)


def cluster_entry(data: bytes, source: str, stem: str) -> tuple[ClusterEntry, str]:
    """One ClusterProfile document checked as the loader checks it: its entry (with the problem
    that refuses it, if any) and its name (``metadata.name``, or ``stem`` when it does not decode)."""
    try:
        profile = load_cluster_profile(data, source=source)
    except CoreError as exc:
        return ClusterEntry(stem, data, Problem(source, exc.code, exc.message)), stem
    name = profile.metadata.name
    where = yamlio.non_finite_path(yamlio.load(data, source=source), "")
    if where is not None:
        message = (
            f"{source}: {where[0]}: {yamlio.go_format_float(where[1])} is not a finite number; a ClusterProfile holds finite"
            " numbers only (its resolved form is canonical JSON)"
        )
        return ClusterEntry(name, data, Problem(source, "document.invalid", message)), name
    return ClusterEntry(name, data), name


def _expand_targets(
    rules: list[TargetRule], applications: list[str], clusters: list[str]
) -> tuple[list[Target], list[str]]:
    """Every (application, cluster) pair the rules select; a later rule's selection replaces an
    earlier one's, but two rules giving one target different namespaces stop the load."""
    targets: dict[tuple[str, str], Target] = {}
    chosen_by: dict[tuple[str, str], int] = {}
    clashes: dict[tuple[int, int], list[tuple[str, str]]] = {}
    warnings = []
    for index, rule in enumerate(rules):
        matched = 0
        chosen_clusters = [cluster for cluster in clusters if _matches_any(cluster, rule.clusters)]
        for app in (app for app in applications if _matches_any(app, rule.applications)):
            excluded = [e.cluster for e in rule.exclude if fnmatchcase(app, e.application)]
            for cluster in chosen_clusters:
                if excluded and _matches_any(cluster, excluded):
                    continue
                earlier = targets.get((app, cluster))
                if earlier is not None and earlier.namespace != rule.namespace:
                    clashes.setdefault((chosen_by[(app, cluster)], index), []).append((app, cluster))
                targets[(app, cluster)] = Target(app, cluster, rule.namespace, rule.profile or "")
                chosen_by[(app, cluster)] = index
                matched += 1
        if matched == 0:
            warnings.append(f"fleet.yaml: spec.targets[{index}] matches no (application, cluster) pair")
    if clashes:
        raise CatalogError([_namespace_clash(rules, pair, found) for pair, found in sorted(clashes.items())])
    # (application, cluster) is unique, so its order is the targets' order
    return [targets[key] for key in sorted(targets)], warnings


def _namespace_clash(rules: list[TargetRule], pair: tuple[int, int], found: list[tuple[str, str]]) -> str:
    first, second = pair
    app, cluster = found[0]
    others = f" and {len(found) - 1} more target(s)" if len(found) > 1 else ""
    shown = [repr(rules[index].namespace) if rules[index].namespace else "no namespace" for index in pair]
    return bound_message(
        f"fleet.yaml: spec.targets[{first}] and spec.targets[{second}] give {app} on {cluster}{others}"
        f" different namespaces ({shown[0]} and {shown[1]}); give every target one namespace"
    )


def _matches_any(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _with_charts(
    applications: list[ApplicationEntry], apps_dir: Path, root: Path, limit: int, source: ChartSource
) -> tuple[list[ApplicationEntry], str]:
    """Each application with the archives of the charts it renders (``farm.catalog.charts``), or
    refused naming its app.yaml and the component; and the helm version that renders them ("" when
    no application has a chart)."""
    result, helm = [], ""
    for app in applications:
        if app.problem is None:
            folder = apps_dir / app.name
            app_file = _relative(folder / "app.yaml", root)
            try:
                refs = chart_references(
                    app.name, app.app_yaml, app.package_yaml, app.values_layerings(), app_file
                )
                archives = application_charts(
                    app.name,
                    folder,
                    refs,
                    source,
                    lambda path: read_catalog_file(path, root, limit),
                    app_file,
                )
            except ChartProblem as problem:
                app = replace(app, problem=Problem(app_file, problem.code, bound_message(problem.message)))
            else:
                if archives:
                    app = replace(app, charts=archives)
                    helm = source.helm_version() or ""
        result.append(app)
    return result, helm


# Reads one application folder: (folder, catalog root, file size limit, the load's warnings to
# extend) → its entry. ``read_application`` by default; a resident process may answer an unchanged
# folder from its last load (``farm.catalog.reuse``).
ApplicationReader = Callable[[Path, Path, int, list[str]], ApplicationEntry]


@gc_paused()
def load_catalog(
    path: str | Path,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    charts: ChartSource | None = None,
    applications: ApplicationReader | None = None,
) -> CatalogSnapshot:
    """Read the catalog at ``path`` (a folder holding fleet.yaml, or the fleet.yaml itself); a
    file over ``max_file_bytes`` (``FARM_CATALOG_MAX_FILE_BYTES``) is refused. Repository charts
    come from ``charts`` (default: fetched with the helm on PATH, each once); each application
    folder is read by ``applications`` (default: ``read_application``)."""
    root = Path(path)
    if root.is_file() and root.name != "fleet.yaml":  # its problems would all name fleet.yaml
        raise CatalogError(
            [
                f"{root}: not a catalog: give the catalog's folder (the one holding fleet.yaml) or its fleet.yaml"
            ]
        )
    fleet_file = root if root.is_file() else root / "fleet.yaml"
    root = fleet_file.parent
    if not fleet_file.is_file():
        raise CatalogError([f"{fleet_file}: no fleet.yaml found"])
    try:
        fleet_yaml = read_catalog_file(fleet_file, root, max_file_bytes)
    except UnsafeFile as error:
        raise CatalogError([str(error)]) from None
    fleet, problems = parse_fleet(fleet_yaml, "fleet.yaml")
    if fleet is None:
        raise CatalogError(problems)
    return _load_contents(
        root,
        fleet,
        fleet_yaml,
        max_file_bytes,
        charts or HelmRepositories(),
        applications or read_application,
    )


def _catalog_folder(root: Path, field: str, folder: str) -> tuple[Path | None, str | None]:
    """The folder ``fleet.yaml`` names in ``spec.<field>``, or why it is refused: it must be a
    relative path without ``..``, and every folder on the way from the catalog root, the root's own
    entry included, must be a real folder, never a symbolic link (a linked folder would be read
    through: a catalog reads only itself)."""
    where = f"fleet.yaml: spec.{field}"
    relative = Path(folder)
    if relative.is_absolute() or ".." in relative.parts:
        return None, f"{where}: {folder!r} must be a folder inside the catalog (no '..', no absolute path)"
    path = root
    for part in relative.parts:
        path = path / part
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return None, f"{where}: folder {folder!r} does not exist"
        except OSError as error:
            return None, f"{where}: folder {folder!r} cannot be read ({error.strerror})"
        if stat.S_ISLNK(info.st_mode):
            return None, (
                f"{_shown(path, root)}: is a symbolic link; a catalog reads only its own files ({where})"
            )
        if not stat.S_ISDIR(info.st_mode):
            return None, f"{where}: {folder!r} is not a folder"
    return path, None


def _load_contents(
    root: Path,
    fleet: Fleet,
    fleet_yaml: bytes,
    limit: int,
    chart_source: ChartSource,
    read_folder: ApplicationReader,
) -> CatalogSnapshot:
    named = [("applications", fleet.spec.applications), ("clusters", fleet.spec.clusters)]
    if fleet.spec.profiles:
        named.append(("profiles", fleet.spec.profiles))
    found = {field: _catalog_folder(root, field, folder) for field, folder in named}
    fatal = [why for _, why in found.values() if why is not None]
    if fatal:
        raise CatalogError(fatal)
    apps_dir, clusters_dir = found["applications"][0], found["clusters"][0]
    profiles_dir = found["profiles"][0] if "profiles" in found else None
    assert apps_dir is not None and clusters_dir is not None
    notes: list[str] = _later_documents([("fleet.yaml", fleet_yaml)])
    folders = []
    for entry in sorted(apps_dir.iterdir()):
        if entry.name.startswith("."):
            notes.append(f"{_shown(entry, root)}: not read: a name starting with a dot is not an application")
        elif entry.is_symlink() or entry.is_dir():
            folders.append(entry)
        else:
            notes.append(
                f"{_shown(entry, root)}: not read: only folders under {apps_dir.name}/ are applications"
            )
    applications = [
        read_folder(p, root, limit, notes) if _is_utf8(p.name) else _misnamed_application(p, root)
        for p in folders
    ]
    fatal += _escaped_name_clashes([a.name for a in applications], fleet.spec.applications)
    clusters: list[ClusterEntry] = []
    seen: dict[str, str] = {}
    notes += _unread_yaml(clusters_dir, root, None)
    for file in sorted(clusters_dir.glob("*.yaml")):
        entry, name = (
            _load_cluster(file, root, limit) if _is_utf8(file.name) else _misnamed_cluster(file, root)
        )
        notes += _later_documents([(_shown(file, root), entry.profile_yaml)])
        if name in seen:
            fatal.append(f"{_shown(file, root)}: ClusterProfile {name!r} is already defined in {seen[name]}")
        seen[name] = _shown(file, root)
        clusters.append(entry)
    if fatal:
        raise CatalogError(fatal)
    profile_documents: tuple[tuple[str, bytes], ...] = ()
    if profiles_dir is not None:
        notes += _unread_yaml(profiles_dir, root, None)
        misnamed = [_not_utf8(p, root).message for p in profiles_dir.glob("*.yaml") if not _is_utf8(p.name)]
        if misnamed:
            raise CatalogError(misnamed)
        try:
            profile_documents = tuple(
                (_relative(p, root), read_catalog_file(p, root, limit))
                for p in sorted(profiles_dir.glob("*.yaml"))
            )
        except UnsafeFile as error:
            raise CatalogError([str(error)]) from None
    declarations = _load_declarations(profile_documents, seen)
    applications = _values_for_unknown_clusters(applications, set(seen), fleet.spec.applications)
    applications, helm_version = _with_charts(applications, apps_dir, root, limit, chart_source)
    targets, warnings = _expand_targets(
        list(fleet.spec.targets), [a.name for a in applications], [c.name for c in clusters]
    )
    targets, refused = _with_selections(targets, declarations, {c.name: c for c in clusters})
    problems = tuple(e.problem for e in [*applications, *clusters] if e.problem is not None)
    problems += tuple(problem for _, problem in refused)
    return CatalogSnapshot(
        name=fleet.metadata.name,
        fleet_yaml=fleet_yaml,
        applications=tuple(applications),
        clusters=tuple(clusters),
        targets=tuple(targets),
        problems=problems,
        profile_documents=profile_documents,
        warnings=tuple(notes + warnings),
        helm_version=helm_version,
        refused=tuple(refused),
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
) -> tuple[list[Target], list[tuple[Target, Problem]]]:
    """Each target of a profiled ClusterProfile carries its selection (the default when none).
    A target whose selection does not resolve is refused with its own problem (a failed target of
    the run); the others go on."""
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
                refused.append((target, Problem("fleet.yaml", exc.code, message)))
                continue
        result.append(target)
    return result, refused
