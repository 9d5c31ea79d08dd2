"""``farm build`` on the command line: the reference renderer's CLI contract (launcher-pipeline
§1.1-1.2): ``--set`` / ``-n`` with a kurel.yaml, ``-o DIR``, a directory argument, the
``no resources generated`` warning, and the errors on stderr with exit status 1."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner, Result

from farm.cli import app as farm_cli

PROFILE = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: cli-cluster
spec:
  capabilities: {}
"""
PACKAGE = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: queue
spec:
  parameters:
  - name: tag
    type: string
    default: "3.1"
  - name: image
    type: string
    default: "registry.example.com/consumer:${tag}"
  - name: replicas
    type: integer
    default: 1
"""
APPLICATION = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: queue
  namespace: jobs
spec:
  components:
  - name: consumer
    type: worker
    properties:
      image: ${image}
      replicas: ${replicas}
"""
EMPTY_APPLICATION = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: hollow
spec:
  components:
  - name: nothing
    type: manifests
    properties:
      inline: "# no documents here\\n"
"""


def _project(tmp_path: Path, app: str = APPLICATION, package: str | None = PACKAGE) -> Path:
    folder = tmp_path / "queue"
    folder.mkdir()
    (folder / "app.yaml").write_text(app)
    if package is not None:
        (folder / "kurel.yaml").write_text(package)
    (tmp_path / "cluster.yaml").write_text(PROFILE)
    return folder


def _build(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(farm_cli, ["build", *args, "--profile", str(tmp_path / "cluster.yaml")])


def test_set_and_namespace_flags_reach_the_output(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    result = _build(
        tmp_path, str(folder / "app.yaml"), "--set", "replicas=2", "--set", "tag=3.2", "-n", "batch"
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    assert "  replicas: 2\n" in result.stdout
    assert "      - image: registry.example.com/consumer:3.2\n" in result.stdout
    namespaces = [line for line in result.stdout.splitlines() if line.strip().startswith("namespace:")]
    assert namespaces == ["  namespace: batch", "  namespace: batch"]  # Deployment, ServiceAccount


def test_set_overrides_the_values_file(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    values = tmp_path / "values.yaml"
    values.write_text("replicas: 3\ntag: '4.0'\n")
    result = _build(tmp_path, str(folder), "--values", str(values), "--set", "replicas=1")
    assert result.exit_code == 0, result.stderr
    assert "  replicas: 1\n" in result.stdout
    assert "registry.example.com/consumer:4.0\n" in result.stdout
    assert "  namespace: jobs\n" in result.stdout


def test_a_directory_argument_means_its_app_yaml(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    by_file = _build(tmp_path, str(folder / "app.yaml"))
    by_folder = _build(tmp_path, str(folder))
    assert by_file.exit_code == by_folder.exit_code == 0
    assert by_folder.stdout == by_file.stdout
    assert by_folder.stdout.startswith("apiVersion: apps/v1\nkind: Deployment\n")


def test_output_dir_gets_app_name_yaml_with_the_stdout_bytes(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    stdout = _build(tmp_path, str(folder)).stdout_bytes
    out = tmp_path / "rendered" / "nested"
    result = _build(tmp_path, str(folder), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert [p.name for p in out.iterdir()] == ["queue.yaml"]  # metadata.name, not the folder name
    assert (out / "queue.yaml").read_bytes() == stdout
    assert stdout.endswith(b"\n") and not stdout.endswith(b"\n\n")


def test_no_resources_is_a_warning_with_empty_stdout(tmp_path: Path) -> None:
    folder = _project(tmp_path, app=EMPTY_APPLICATION, package=None)
    result = _build(tmp_path, str(folder))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr == "warning: no resources generated\n"


def test_values_or_set_without_kurel_yaml_is_an_error(tmp_path: Path) -> None:
    folder = _project(tmp_path, package=None)
    values = tmp_path / "values.yaml"
    values.write_text("replicas: 2\n")
    for extra in (["--values", str(values)], ["--set", "replicas=2"]):
        result = _build(tmp_path, str(folder), *extra)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == "Error: --values and --set need a kurel.yaml beside the application\n"


def test_without_kurel_yaml_placeholders_stay_literal(tmp_path: Path) -> None:
    folder = _project(tmp_path, package=None)
    result = _build(tmp_path, str(folder))
    assert result.exit_code == 1
    assert result.stderr == (
        'Error: component "consumer" (type "worker") in document "queue": image: image "${image}" rejected: not a valid image reference\n'
    )


def test_set_errors_name_the_parameter(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    result = _build(tmp_path, str(folder), "--set", "replicas=two")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: --set replicas=two: parameter 'replicas' must be an integer\n"
    result = _build(tmp_path, str(folder), "--set", "colour=blue")
    assert result.stderr == "Error: --set colour: undeclared parameter 'colour'\n"


def test_a_missing_application_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(PROFILE)
    result = _build(tmp_path, str(tmp_path / "absent"))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: reading application {tmp_path / 'absent'}: ")
