"""`farm build --declaration FILE --select name=value` reproduces one profiled target by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from farm.catalog import load_catalog
from farm.cli import app
from farm.core.render import render

EXAMPLE = Path(__file__).parents[2] / "examples/fleet"
DECLARATION = EXAMPLE / "profiles/prod-nginx-ingress.yaml"
CLUSTER = EXAMPLE / "clusters/prod-nginx.yaml"


def build(*args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(app, ["build", *args])
    return result.exit_code, result.stdout_bytes, result.stderr


def test_build_renders_the_same_bytes_as_the_fleet_target() -> None:
    code, out, _ = build(
        str(EXAMPLE / "applications/catalog-api"),
        "--profile",
        str(CLUSTER),
        "--declaration",
        str(DECLARATION),
        "--select",
        "ingress-class=internal",
    )
    snapshot = load_catalog(EXAMPLE)
    target = next(
        t
        for t in snapshot.target_requests
        if (t.target.application, t.target.cluster) == ("catalog-api", "prod-nginx")
    )
    assert code == 0 and out == render(target.request).manifests


def test_build_refuses_a_bad_selection_in_one_error_line() -> None:
    for args, needle in [
        (["--select", "ingress-class=nope", "--declaration", str(DECLARATION)], "profile.unknown_value"),
        (["--select", "ingress-class=internal"], "profile.no_declaration"),
        (["--select", "ingress-class", "--declaration", str(DECLARATION)], "profile.invalid_selection"),
    ]:
        code, out, err = build(str(EXAMPLE / "applications/catalog-api"), "--profile", str(CLUSTER), *args)
        assert code == 1 and out == b""
        assert err.startswith("Error: ") and needle in err and err.count("\n") == 1


def test_build_applies_the_lock_check(tmp_path: Path) -> None:
    folder = tmp_path / "storefront"
    shutil.copytree(EXAMPLE / "applications/storefront", folder)
    app_yaml = folder / "app.yaml"
    app_yaml.write_text(
        app_yaml.read_text().replace(
            'hostnames: ["shop.example.com"]',
            'hostnames: ["shop.example.com"]\n            ingressClassName: other',
        )
    )
    code, out, err = build(str(folder), "--profile", str(CLUSTER), "--declaration", str(DECLARATION))
    assert code == 1 and out == b"" and "profile.lock_divergence" in err and "ingressClassName" in err
