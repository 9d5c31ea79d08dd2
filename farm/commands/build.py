"""``farm build``: the core's command-line face, with the reference renderer's contract.

Manifests go to stdout (or ``DIR/<app name>.yaml`` with ``-o``), warnings to stderr as
``warning: ...``, errors to stderr as ``Error: ...`` with exit status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from farm.build.bounded import BoundExceeded, stop_render_children
from farm.build.charts import with_build_charts
from farm.build.step import RenderJob, RenderOutcome, render_bounds, render_requests
from farm.core.errors import CoreError
from farm.core.render import RenderRequest, ValuesLayer


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CoreError(f"reading {what} {path}: {exc.strerror or exc}") from None


def _app_path(argument: Path) -> Path:
    return argument / "app.yaml" if argument.is_dir() else argument


def build_command(
    app: Path = typer.Argument(..., help="app.yaml, or a directory holding app.yaml"),
    profile: Path = typer.Option(..., "--profile", help="ClusterProfile file (cluster.yaml)"),
    values: Path | None = typer.Option(None, "--values", help="values file for kurel.yaml parameters"),
    set_values: list[str] = typer.Option([], "--set", help="parameter override key=value (repeatable)"),
    namespace: str | None = typer.Option(None, "-n", "--namespace", help="namespace for every object"),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="write DIR/<app name>.yaml instead of stdout"
    ),
    charts: Path | None = typer.Option(
        None, "--charts", help="chart folder (DIR/<chart>/Chart.yaml) helm renders from, fetching nothing"
    ),
    declaration: Path | None = typer.Option(
        None, "--declaration", help="ConfigurationProfile file over the ClusterProfile"
    ),
    select: str | None = typer.Option(
        None, "--select", help="profile selection name=value (default: the declaration's default)"
    ),
) -> None:
    """Render one Application for one ClusterProfile, exactly as `kurel build` does."""
    try:
        app_file = _app_path(app)
        package_file = app_file.parent / "kurel.yaml"
        cluster_profile, resolved = _resolve_profile(profile, declaration, select)
        request = RenderRequest(
            _read(app_file, "application"),
            cluster_profile,
            package=_read(package_file, "package") if package_file.is_file() else None,
            values=(ValuesLayer(str(values), _read(values, "values file")),) if values is not None else (),
            sets=tuple(set_values),
            namespace=namespace,
            app_source=str(app_file),
            cluster_profile_source=str(profile),
            package_source=str(package_file),
            selection=select or "",
            resolved_profile=resolved,
        )
        request = with_build_charts(request, charts)
    except CoreError as exc:
        sys.stderr.write(f"Error: {exc.message}\n")
        raise typer.Exit(1) from None
    except ValueError as exc:  # a ProfileError: declaration or selection
        sys.stderr.write(f"Error: {exc}\n")
        raise typer.Exit(1) from None
    rendered = _render(RenderJob(request))
    for warning in rendered.warnings:
        sys.stderr.write(f"warning: {warning}\n")
    if not rendered.manifests:
        return
    if output is not None:
        _write_output(output, rendered.app_name, rendered.manifests)
        return
    sys.stdout.buffer.write(rendered.manifests)
    sys.stdout.flush()


def _render(job: RenderJob) -> RenderOutcome:
    """The one render step of the workers (lock check, charts, a render child bounded by
    ``FARM_RENDER_TIMEOUT_SECONDS`` and ``FARM_RENDER_MEMORY_MIB``); a failure is one ``Error:``."""
    from farm.settings import SettingsError, load_settings

    try:
        bounds = render_bounds(load_settings())
    except SettingsError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        raise typer.Exit(1) from None
    try:
        (outcome,) = render_requests([job], bounds)
    finally:
        stop_render_children()  # a build renders once: its render child ends with it
    if isinstance(outcome, BoundExceeded):
        sys.stderr.write(f"Error: {outcome.message} [{outcome.code}]\n")
        raise typer.Exit(1)
    if outcome.manifests is None:
        if outcome.crash:
            sys.stderr.write(outcome.crash)
        shown = (
            f"{outcome.message} [{outcome.code}]" if outcome.code.startswith("profile.") else outcome.message
        )
        sys.stderr.write(f"Error: {shown}\n")
        raise typer.Exit(1)
    return outcome


def _resolve_profile(
    profile: Path, declaration: Path | None, select: str | None
) -> tuple[bytes, bytes | None]:
    """The ClusterProfile bytes to render and, when profiled, the resolved envelope."""
    data = _read(profile, "ClusterProfile")
    if declaration is None and select is None:
        return data, None
    from farm.profiles import parse_declaration, parse_selection, resolve  # only when profiled

    parsed = parse_declaration(_read(declaration, "declaration"), str(declaration)) if declaration else None
    selection = parse_selection(select, source="--select") if select else None
    resolved = resolve(data, str(profile), parsed, selection)
    return resolved.effective, resolved.document if resolved.selected is not None else None


def _write_output(folder: Path, app_name: str, manifests: bytes) -> None:
    """``-o DIR``: the manifests as ``DIR/<app name>.yaml``; a file or an unwritable place is an
    ``Error:`` line naming the option."""
    try:
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(20, "not a folder (-o names the folder that gets <application>.yaml)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{app_name}.yaml").write_bytes(manifests)
    except OSError as exc:
        sys.stderr.write(f"Error: -o {folder}: {exc.strerror or exc}\n")
        raise typer.Exit(1) from None


def register(app: typer.Typer) -> None:
    app.command("build")(build_command)
