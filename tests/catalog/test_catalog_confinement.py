"""A catalog reads only itself: symlinks, FIFOs, devices, folders where a file goes, oversized
files and paths leaving the catalog are refused with one error naming the file, never followed,
never hanging; one hostile file fails only its own application or cluster."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from farm.catalog import CatalogError, load_catalog
from farm.cli import app as cli


@pytest.fixture
def catalog(catalog: Path, tmp_path: Path) -> Path:
    """The example catalog, a secret beside it."""
    (tmp_path / "secret.yaml").write_text("password: hunter2\n")
    return catalog


def _problems(root: Path) -> dict[str, str]:
    return {problem.file: problem.message for problem in load_catalog(root).problems}


def _good_apps(root: Path) -> set[str]:
    return {a.name for a in load_catalog(root).applications if a.problem is None}


def test_a_symlinked_app_yaml_fails_its_application_only(catalog: Path) -> None:
    app_yaml = catalog / "applications" / "greeter" / "app.yaml"
    app_yaml.unlink()
    app_yaml.symlink_to(catalog.parent / "secret.yaml")
    problems = _problems(catalog)
    assert "symbolic link" in problems["applications/greeter/app.yaml"]
    assert "storefront" in _good_apps(catalog)
    assert all(b"hunter2" not in a.app_yaml for a in load_catalog(catalog).applications)


def test_a_symlinked_application_folder_is_refused(catalog: Path) -> None:
    (catalog / "applications" / "stolen").symlink_to(catalog / "applications" / "greeter")
    assert "symbolic link" in _problems(catalog)["applications/stolen"]


def test_a_symlinked_cluster_file_fails_its_cluster_only(catalog: Path) -> None:
    (catalog / "clusters" / "prod-evil.yaml").symlink_to(catalog.parent / "secret.yaml")
    snapshot = load_catalog(catalog)
    assert "symbolic link" in _problems(catalog)["clusters/prod-evil.yaml"]
    assert {c.name for c in snapshot.clusters if c.problem is None} >= {"prod-nginx", "prod-gateway"}


def test_a_dangling_symlinked_values_file_fails_its_application(catalog: Path) -> None:
    folder = next(p for p in (catalog / "applications").iterdir() if (p / "kurel.yaml").exists())
    (folder / "values.yaml").unlink(missing_ok=True)
    (folder / "values.yaml").symlink_to(catalog.parent / "nowhere.yaml")
    assert "symbolic link" in _problems(catalog)[f"applications/{folder.name}/values.yaml"]


def test_a_fifo_where_app_yaml_goes_is_refused_without_hanging(catalog: Path) -> None:
    app_yaml = catalog / "applications" / "greeter" / "app.yaml"
    app_yaml.unlink()
    os.mkfifo(app_yaml)
    assert "not a regular file" in _problems(catalog)["applications/greeter/app.yaml"]


def test_a_directory_where_a_cluster_file_goes_is_refused(catalog: Path) -> None:
    (catalog / "clusters" / "prod-dir.yaml").mkdir()
    assert "not a regular file" in _problems(catalog)["clusters/prod-dir.yaml"]


def test_a_file_over_the_size_limit_is_refused(catalog: Path) -> None:
    (catalog / "applications" / "greeter" / "app.yaml").write_text("# " + "x" * 5000 + "\n")
    snapshot = load_catalog(catalog, max_file_bytes=4000)
    problems = {problem.file: problem.message for problem in snapshot.problems}
    assert "over the 4000-byte limit" in problems["applications/greeter/app.yaml"]
    assert "storefront" in {a.name for a in snapshot.applications if a.problem is None}


def test_the_size_limit_is_a_setting_farm_run_honours(catalog: Path, tmp_path: Path) -> None:
    (catalog / "applications" / "greeter" / "app.yaml").write_text("# " + "x" * 5000 + "\n")
    env = {"FARM_HOME": str(tmp_path / "farm"), "FARM_CATALOG_MAX_FILE_BYTES": "4000"}
    result = CliRunner().invoke(cli, ["run", str(catalog), "--json", "--processes", "1"], env=env)
    summary = json.loads(result.stdout)
    refused = summary["failures"]["catalog.unsafe_file"]
    assert {f["application"] for f in refused} == {"greeter"}
    assert all("over the 4000-byte limit for a catalog file" in f["message"] for f in refused)
    assert summary["counts"]["succeeded"] > 0 and result.exit_code == 1


@pytest.mark.parametrize("field", ["applications", "clusters"])
@pytest.mark.parametrize("path", ["../../etc", "/etc"])
def test_a_spec_path_leaving_the_catalog_stops_the_load_naming_the_field(
    catalog: Path, field: str, path: str
) -> None:
    fleet = catalog / "fleet.yaml"
    fleet.write_text(fleet.read_text().replace(f"  {field}: {field}", f"  {field}: {path}"))
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert f"fleet.yaml: spec.{field}: {path!r} must be a folder inside the catalog" in str(raised.value)


def _outside_copy(catalog: Path, folder: str) -> Path:
    """The catalog's ``folder`` moved outside the catalog, a secret added to it."""
    outside = catalog.parent / f"outside-{folder}"
    (catalog / folder).rename(outside)
    (outside / "secret.yaml").write_text("password: hunter2\n")
    return outside


@pytest.mark.parametrize("folder", ["applications", "clusters", "profiles"])
def test_a_symlink_in_place_of_a_folder_fleet_yaml_names_stops_the_load(catalog: Path, folder: str) -> None:
    (catalog / folder).symlink_to(_outside_copy(catalog, folder))
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert raised.value.problems == [
        f"{folder}: is a symbolic link; a catalog reads only its own files (fleet.yaml: spec.{folder})"
    ]


def test_a_symlinked_folder_on_the_way_to_the_applications_folder_stops_the_load(catalog: Path) -> None:
    outside = _outside_copy(catalog, "applications")
    (catalog.parent / "team").mkdir()
    outside.rename(catalog.parent / "team" / "applications")
    (catalog / "team").symlink_to(catalog.parent / "team")
    fleet = catalog / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("  applications: applications", "  applications: team/applications")
    )
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert raised.value.problems == [
        "team: is a symbolic link; a catalog reads only its own files (fleet.yaml: spec.applications)"
    ]


def test_a_symlinked_values_folder_fails_its_application_only(catalog: Path) -> None:
    outside = catalog.parent / "outside-values"
    outside.mkdir()
    (outside / "prod-nginx.yaml").write_text("password: hunter2\n")
    (catalog / "applications" / "greeter" / "values").symlink_to(outside)
    assert "symbolic link" in _problems(catalog)["applications/greeter/values"]
    assert "storefront" in _good_apps(catalog)


@pytest.mark.parametrize("path", ["../../etc", "/etc"])
def test_a_profiles_path_leaving_the_catalog_stops_the_load(catalog: Path, path: str) -> None:
    fleet = catalog / "fleet.yaml"
    fleet.write_text(fleet.read_text().replace("  profiles: profiles", f"  profiles: {path}"))
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert f"fleet.yaml: spec.profiles: {path!r} must be a folder inside the catalog" in str(raised.value)


def test_farm_run_with_a_symlinked_clusters_folder_is_one_error_line_and_reads_nothing(
    catalog: Path, tmp_path: Path
) -> None:
    (catalog / "clusters").symlink_to(_outside_copy(catalog, "clusters"))
    result = CliRunner().invoke(
        cli, ["run", str(catalog), "--processes", "1"], env={"FARM_HOME": str(tmp_path / "farm")}
    )
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: clusters: is a symbolic link"), result.stderr
    assert "hunter2" not in result.output
