"""``farm serve``: the JSON API (and dashboard) over the farm's storage, with uvicorn."""

from __future__ import annotations

import socket
from pathlib import Path

import typer
from rich.console import Console

err = Console(stderr=True, markup=False)


def _catalog_names(folders: list[Path]) -> dict[str, Path]:
    from farm.catalog import CatalogError, load_catalog

    named: dict[str, Path] = {}
    for folder in folders:
        try:
            snapshot = load_catalog(folder)
        except CatalogError as exc:
            err.print(f"Error: --catalog {folder}: {exc.problems[0] if exc.problems else exc}")
            raise typer.Exit(1) from None
        other = named.get(snapshot.name)
        if other is not None and other != folder.resolve():
            # a trigger names its catalog by fleet name: one of the two would never be run
            err.print(
                f"Error: --catalog {folder}: its fleet name {snapshot.name!r} is also that of --catalog "
                f"{other} (POST /api/runs names a catalog by its fleet name: give each a name of its own)",
                soft_wrap=True,  # one line, however long its paths
            )
            raise typer.Exit(1)
        named[snapshot.name] = folder.resolve()
    return named


def _check_address(host: str, port: int) -> None:
    """One ``Error:`` line when ``host``:``port`` cannot be listened on (a port in use, a host
    name that does not resolve, an address not of this machine): uvicorn logged the reason among
    its start-up lines and exited with status 3. Checked by binding it once, then letting it go
    for uvicorn (which binds it the same way)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            from farm.commands._support import fail

            reason = error.strerror or str(error)
            raise fail(
                f"--host {host} --port {port}: cannot listen there: {reason} (choose another --port or --host)"
            ) from None


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", min=0, max=65535),
    catalog: list[Path] = typer.Option(
        [], "--catalog", help="a catalog runs may be triggered of (repeatable)"
    ),
) -> None:
    """Serve the JSON API over the farm's storage (embedded default: ./.farm/)."""
    import uvicorn

    from farm.api import create_app
    from farm.commands._support import open_existing_storage
    from farm.logs import configure_logging
    from farm.settings import load_settings
    from farm.store.migrate import prepare_database

    _check_address(host, port)
    settings = load_settings()
    configure_logging(settings.log_format)  # a line per request (farm.api.access), text or JSON
    storage = open_existing_storage(settings)
    prepare_database(storage)
    app = create_app(
        storage,
        _catalog_names(catalog),
        settings.api_token,
        read_requires_token=settings.api_read_requires_token,
    )
    # uvicorn's own records go through the farm's handler; its access log is replaced by ours
    uvicorn.run(app, host=host, port=port, log_config=None, access_log=False, log_level="info")


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
