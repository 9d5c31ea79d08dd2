"""Nothing of a catalog is dropped silently: a folder without app.yaml, a values file for a
cluster that does not exist and a name that is not UTF-8 (shown with its bytes escaped) are
refused naming the file; a refused application's or cluster's targets fail with the loader's
reason, the others render and ``farm run`` exits 1; a target rule that matches nothing is a
warning, and ``farm run --strict`` makes every warning an error that plans nothing."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from farm.catalog import CatalogError, load_catalog
from farm.cli import app as cli


def farm_run(
    catalog: Path,
    home: Path,
    *extra: str,
) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(
        cli, ["run", str(catalog), "--json", "--processes", "1", *extra], env={"FARM_HOME": str(home)}
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout) if result.stdout else None, result.stderr


def _problems(
    catalog: Path,
) -> dict[str, tuple[str, str]]:
    return {p.file: (p.code, p.message) for p in load_catalog(catalog).problems}


def test_a_folder_without_app_yaml_is_refused_naming_the_file_and_what_it_holds(
    catalog: Path,
) -> None:
    folder = catalog / "applications" / "search"
    (folder / "app.yaml").rename(folder / "app.yml")
    code, message = _problems(catalog)["applications/search/app.yaml"]
    assert code == "catalog.missing_file"
    assert message.startswith("applications/search/app.yaml: does not exist: every folder of")
    assert message.endswith("the folder holds app.yml")


def test_a_refused_applications_targets_fail_with_the_loaders_reason(
    catalog: Path,
    tmp_path: Path,
) -> None:
    folder = catalog / "applications" / "search"
    (folder / "app.yaml").unlink()
    status, summary, stderr = farm_run(catalog, tmp_path / "farm")
    assert status == 1 and summary is not None
    failures = summary["failures"]["catalog.missing_file"]
    assert {(f["application"], f["cluster"]) for f in failures} == {
        ("search", "prod-gateway"),
        ("search", "prod-nginx"),
    }
    assert all(f["message"].startswith("applications/search/app.yaml: does not exist") for f in failures)
    assert "unsupported apiVersion" not in json.dumps(summary)
    assert "warning: applications/search/app.yaml: does not exist" in stderr
    assert list(summary["failures"]) == ["catalog.missing_file"] and summary["counts"]["succeeded"] > 20


def test_a_symlinked_app_yaml_fails_its_targets_as_unsafe_not_as_an_empty_document(
    catalog: Path, tmp_path: Path
) -> None:
    app_yaml = catalog / "applications" / "search" / "app.yaml"
    (tmp_path / "elsewhere.yaml").write_text(app_yaml.read_text())
    app_yaml.unlink()
    app_yaml.symlink_to(tmp_path / "elsewhere.yaml")
    _, summary, _ = farm_run(catalog, tmp_path / "farm")
    assert summary is not None
    failures = summary["failures"]["catalog.unsafe_file"]
    assert {f["application"] for f in failures} == {"search"} and len(failures) == 2
    assert all("is a symbolic link" in f["message"] for f in failures)


def test_a_values_file_for_a_cluster_that_does_not_exist_refuses_its_application(
    catalog: Path,
) -> None:
    values = catalog / "applications" / "greeter" / "values"
    values.mkdir()
    (values / "prod-ngnix.yaml").write_text("replicas: 3\n")
    code, message = _problems(catalog)["applications/greeter/values/prod-ngnix.yaml"]
    assert code == "parameters.invalid"
    assert "no ClusterProfile 'prod-ngnix' in the catalog" in message


def test_a_values_file_for_a_known_cluster_is_accepted(
    catalog: Path,
) -> None:
    values = catalog / "applications" / "greeter" / "values"
    values.mkdir()
    (values / "prod-nginx.yaml").write_text("replicas: 3\n")
    assert load_catalog(catalog).problems == ()


def test_an_application_folder_whose_name_is_not_utf8_fails_its_targets_alone_naming_it_escaped(
    catalog: Path, tmp_path: Path
) -> None:
    source = catalog / "applications" / "docs-site"
    os.rename(source, os.fsencode(catalog / "applications") + b"/caf\xe9")
    status, summary, stderr = farm_run(catalog, tmp_path / "farm")
    assert status == 1 and summary is not None
    assert "warning: applications/caf\\xe9: the name is not UTF-8; rename it" in stderr
    failures = summary["failures"]
    assert list(failures) == ["catalog.unsafe_file"]
    assert {(f["application"], f["cluster"]) for f in failures["catalog.unsafe_file"]} == {
        ("caf\\xe9", "prod-gateway"),
        ("caf\\xe9", "prod-nginx"),
    }
    assert {f["message"] for f in failures["catalog.unsafe_file"]} == {
        "applications/caf\\xe9: the name is not UTF-8; rename it (catalog names must be UTF-8)"
    }
    assert summary["counts"]["succeeded"] > 20


def test_a_cluster_file_whose_name_is_not_utf8_fails_the_targets_on_it_alone_naming_it_escaped(
    catalog: Path, tmp_path: Path
) -> None:
    os.rename(
        catalog / "clusters" / "staging-traefik.yaml",
        os.fsencode(catalog / "clusters") + b"/staging-tr\xe6fik.yaml",
    )
    problems = _problems(catalog)
    assert problems["clusters/staging-tr\\xe6fik.yaml"][0] == "catalog.unsafe_file"
    status, summary, stderr = farm_run(catalog, tmp_path / "farm")
    assert status == 1 and summary is not None
    assert "warning: clusters/staging-tr\\xe6fik.yaml: the name is not UTF-8; rename it" in stderr
    failures = summary["failures"]
    assert list(failures) == ["catalog.unsafe_file"]
    assert {f["cluster"] for f in failures["catalog.unsafe_file"]} == {"staging-tr\\xe6fik"}
    assert len(failures["catalog.unsafe_file"]) == 5  # the staging rule's applications
    assert all(
        f["message"].startswith("clusters/staging-tr\\xe6fik.yaml: the name is not UTF-8")
        for f in failures["catalog.unsafe_file"]
    )
    assert summary["counts"]["succeeded"] > 20


def test_a_name_that_is_not_utf8_is_an_error_that_plans_nothing_with_strict(
    catalog: Path, tmp_path: Path
) -> None:
    os.rename(catalog / "applications" / "docs-site", os.fsencode(catalog / "applications") + b"/caf\xe9")
    status, summary, stderr = farm_run(catalog, tmp_path / "farm", "--strict")
    assert status == 1 and summary is None
    assert stderr.splitlines() == [
        "Error: applications/caf\\xe9: the name is not UTF-8; rename it (catalog names must be UTF-8)"
        " (--strict: nothing was planned)"
    ]


def test_a_folder_whose_escaped_name_is_another_folders_name_is_refused_naming_it(catalog: Path) -> None:
    os.rename(catalog / "applications" / "docs-site", os.fsencode(catalog / "applications") + b"/caf\xe9")
    shutil.copytree(catalog / "applications" / "greeter", catalog / "applications" / "caf\\xe9")
    with pytest.raises(CatalogError) as refused:
        load_catalog(catalog)
    assert refused.value.problems == [
        "applications/caf\\xe9: two application folders have this name once bytes that are not"
        " UTF-8 are escaped; rename one"
    ]


def _add_rule_matching_nothing(
    catalog: Path,
) -> None:
    fleet = catalog / "fleet.yaml"
    fleet.write_text(fleet.read_text() + '    - applications: ["serch"]\n      clusters: ["prod-*"]\n')


def test_a_target_rule_matching_nothing_is_a_warning_naming_the_rule(
    catalog: Path,
    tmp_path: Path,
) -> None:
    _add_rule_matching_nothing(catalog)
    assert load_catalog(catalog).warnings == (
        "fleet.yaml: spec.targets[3] matches no (application, cluster) pair",
    )
    status, summary, stderr = farm_run(catalog, tmp_path / "farm")
    assert status == 0 and summary is not None and summary["state"] == "completed"
    assert stderr == "warning: fleet.yaml: spec.targets[3] matches no (application, cluster) pair\n"


def test_strict_makes_a_rule_matching_nothing_an_error_and_plans_nothing(
    catalog: Path, tmp_path: Path
) -> None:
    _add_rule_matching_nothing(catalog)
    status, summary, stderr = farm_run(catalog, tmp_path / "farm", "--strict")
    assert status == 1 and summary is None
    assert stderr.splitlines() == [
        "Error: fleet.yaml: spec.targets[3] matches no (application, cluster) pair (--strict: nothing was planned)"
    ]
    runs = CliRunner().invoke(cli, ["runs"], env={"FARM_HOME": str(tmp_path / "farm")})
    assert runs.exit_code == 0 and runs.stdout == ""


def test_strict_passes_a_clean_catalog(
    catalog: Path,
    tmp_path: Path,
) -> None:
    status, summary, stderr = farm_run(catalog, tmp_path / "farm", "--strict")
    assert status == 0 and stderr == "" and summary is not None and summary["state"] == "completed"


@pytest.mark.parametrize(
    ("value", "path", "shown"),
    [
        ("x: .nan", "spec.capabilities.weird.rendering.x", ".nan"),
        ("x: [1, -.inf]", "spec.capabilities.weird.rendering.x[1]", "-.inf"),
        ("port: {value: .Inf}", "spec.capabilities.weird.rendering.port.value", ".inf"),
    ],
)
def test_a_non_finite_number_anywhere_in_a_cluster_profile_refuses_that_cluster_profile_at_load(
    catalog: Path, value: str, path: str, shown: str
) -> None:
    profile = catalog / "clusters" / "staging-traefik.yaml"
    profile.write_text(profile.read_text() + f"    weird:\n      rendering:\n        {value}\n")
    snapshot = load_catalog(catalog)
    code, message = _problems(catalog)["clusters/staging-traefik.yaml"]
    assert code == "document.invalid"
    assert message.startswith(f"clusters/staging-traefik.yaml: {path}: {shown} is not a finite number")
    assert {c.name for c in snapshot.clusters if c.problem is None} == {"prod-nginx", "prod-gateway"}


def test_farm_run_fails_the_targets_of_a_cluster_profile_holding_nan_and_renders_the_rest(
    catalog: Path, tmp_path: Path
) -> None:
    profile = catalog / "clusters" / "prod-nginx.yaml"
    profile.write_text(profile.read_text() + "    weird:\n      rendering:\n        x: .nan\n")
    status, summary, stderr = farm_run(catalog, tmp_path / "farm")
    assert status == 1 and summary is not None, stderr
    failures = summary["failures"]["document.invalid"]
    assert {f["cluster"] for f in failures} == {"prod-nginx"}
    assert all(
        "clusters/prod-nginx.yaml: spec.capabilities.weird.rendering.x: .nan" in f["message"]
        for f in failures
    )
    assert summary["counts"]["succeeded"] > 10


def test_farm_plan_names_the_file_and_path_of_a_nan_in_a_cluster_profile(
    catalog: Path, tmp_path: Path
) -> None:
    profile = catalog / "clusters" / "prod-nginx.yaml"
    profile.write_text(profile.read_text() + "    weird:\n      rendering:\n        x: .nan\n")
    result = CliRunner().invoke(cli, ["plan", str(catalog)], env={"FARM_HOME": str(tmp_path / "farm")})
    assert "Traceback" not in result.output and "JSON compliant" not in result.output
    assert (
        "clusters/prod-nginx.yaml: spec.capabilities.weird.rendering.x: .nan is not a finite number"
        in result.output
    )


def test_an_emitted_object_over_the_api_servers_limit_fails_its_target_and_the_rest_render(
    catalog: Path, tmp_path: Path
) -> None:
    profile = catalog / "clusters" / "staging-traefik.yaml"
    profile.write_text(
        profile.read_text().replace("ingressClassName: traefik", f"ingressClassName: {'t' * 1_600_000}")
    )
    status, summary, _ = farm_run(catalog, tmp_path / "farm")
    assert status == 1 and summary is not None
    failures = summary["failures"]["render.object_too_large"]
    assert {f["cluster"] for f in failures} == {"staging-traefik"}
    assert all(
        f["message"].startswith('Ingress "') and "bytes the Kubernetes API server accepts" in f["message"]
        for f in failures
    )
    assert all(len(f["message"]) < 400 for f in failures)
    assert summary["counts"]["succeeded"] > 20


def _warnings(catalog: Path) -> list[str]:
    return list(load_catalog(catalog).warnings)


@pytest.mark.parametrize(
    ("where", "name"),
    [
        ("clusters", "prod-extra.yml"),
        ("clusters", "prod-extra.YAML"),
        ("applications/greeter", "values.yml"),
        ("applications/greeter/values", "prod-nginx.yml"),
        ("applications/greeter/values", "prod-nginx.Yaml"),
    ],
)
def test_a_yaml_file_the_loader_does_not_read_is_a_warning_naming_it(
    catalog: Path, where: str, name: str
) -> None:
    folder = catalog / where
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("replicas: 3\n")
    assert [w for w in _warnings(catalog) if w.startswith(f"{where}/{name}: not read: ")] != []


def test_a_dot_folder_and_a_plain_file_under_applications_are_warnings_naming_them(catalog: Path) -> None:
    shutil.copytree(catalog / "applications" / "search", catalog / "applications" / ".search-old")
    (catalog / "applications" / "notes.txt").write_text("todo\n")
    warnings = _warnings(catalog)
    assert "applications/.search-old: not read: a name starting with a dot is not an application" in warnings
    assert "applications/notes.txt: not read: only folders under applications/ are applications" in warnings


def test_farm_run_strict_makes_an_unread_file_an_error_that_plans_nothing(
    catalog: Path, tmp_path: Path
) -> None:
    (catalog / "clusters" / "prod-extra.yml").write_text("kind: ClusterProfile\n")
    status, summary, stderr = farm_run(catalog, tmp_path / "farm", "--strict")
    assert status != 0 and summary is None
    assert "Error: clusters/prod-extra.yml: not read: only files named *.yaml are read here" in stderr


def test_spec_profiles_naming_a_folder_that_does_not_exist_stops_the_load_as_spec_applications_does(
    catalog: Path,
) -> None:
    shutil.rmtree(catalog / "profiles")
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert raised.value.problems == ["fleet.yaml: spec.profiles: folder 'profiles' does not exist"]


@pytest.mark.parametrize(
    ("folder", "name", "says"),
    [
        ("<script>alert(1)<", "<script>alert(1)<", "is not a valid DNS-1123 subdomain"),
        ("greeter-two", "greeter", "must match its folder name 'greeter-two'"),
        ("greeter", "${image}", "is not a valid DNS-1123 subdomain"),
    ],
)
def test_an_application_with_a_kurel_yaml_gets_the_name_checks_of_one_without(
    catalog: Path, folder: str, name: str, says: str
) -> None:
    source = catalog / "applications" / "greeter"
    app_yaml = source / "app.yaml"
    app_yaml.write_text(app_yaml.read_text().replace("  name: greeter\n", f"  name: {json.dumps(name)}\n", 1))
    if folder != "greeter":
        source.rename(catalog / "applications" / folder)
    code, message = _problems(catalog)[f"applications/{folder}/app.yaml"]
    assert code == "document.invalid" and says in message


def test_two_target_rules_giving_one_target_different_namespaces_stop_the_load_naming_both(
    catalog: Path,
) -> None:
    fleet = catalog / "fleet.yaml"
    fleet.write_text(
        fleet.read_text().replace("      profile: ingress-class=internal", "      namespace: back-office")
    )
    with pytest.raises(CatalogError) as raised:
        load_catalog(catalog)
    assert raised.value.problems == [
        "fleet.yaml: spec.targets[0] and spec.targets[2] give catalog-api on prod-nginx and 1 more target(s)"
        " different namespaces (no namespace and 'back-office'); give every target one namespace"
    ]


@pytest.mark.parametrize(
    "file",
    [
        "applications/search/app.yaml",
        "applications/greeter/kurel.yaml",
        "clusters/prod-nginx.yaml",
        "fleet.yaml",
    ],
)
def test_a_second_yaml_document_in_a_file_read_for_its_first_is_a_warning(catalog: Path, file: str) -> None:
    path = catalog / file
    path.write_text(path.read_text() + "---\nkind: Secret\n")
    snapshot = load_catalog(catalog)
    assert f"{file}: holds more than one YAML document; only the first is read" in snapshot.warnings
    assert snapshot.problems == ()
