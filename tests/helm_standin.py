"""A test-only stand-in for helm (no helm binary can be installed on the test machines). The
tests copy it onto PATH as ``helm``. It understands three commands:

- ``helm template RELEASE CHART --namespace NS --values FILE``, where CHART is a local chart
  folder or a chart archive (``.tgz``, as ``helm pull`` leaves it): it reads Chart.yaml and
  values.yaml (the given values merged over them) and renders templates/*.yaml in name order, as
  helm does, with a tiny subset of the template language: ``{{ .Release.Name }}``,
  ``{{ .Release.Namespace }}``, ``{{ .Chart.Name }}``, ``{{ .Chart.Version }}``,
  ``{{ .Values.a.b }}`` (an absent value renders empty), ``| quote``, ``{{ required "msg" .Values.x }}``
  and ``{{ fail "msg" }}``. It never fetches: any other chart, or ``--repo``, is an error.
- ``helm pull CHART --repo URL --version V --destination DIR``: reads URL/index.yaml (Helm's
  repository index), finds CHART at version V and downloads its archive into DIR, as helm does.
- ``helm version --short``: ``$HELM_STANDIN_VERSION``, or ``v3.99.0+gstandin``.

Flags are taken as ``--flag value`` or ``--flag=value``. With HELM_STANDIN_LOG set it appends its
argv there, one JSON line.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


class TemplateFailure(Exception):
    pass


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _lookup(path: str, scope: dict[str, Any]) -> Any:
    value: Any = scope
    for part in path.lstrip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _evaluate(expression: str, scope: dict[str, Any], where: str) -> str:
    expression, _, pipe = expression.partition("|")
    words = expression.split(maxsplit=2) if expression.startswith(("required", "fail")) else [expression]
    if words[0] == "fail":
        raise TemplateFailure(f"execution error at ({where}): {json.loads(expression[4:].strip())}")
    if words[0] == "required":
        message, path = re.fullmatch(r'required\s+("(?:[^"\\]|\\.)*")\s+(\S+)', expression.strip()).groups()
        value = _lookup(path, scope)
        if value in (None, ""):
            raise TemplateFailure(f"execution error at ({where}): {json.loads(message)}")
    else:
        value = _lookup(expression.strip(), scope)
    text = _text(value)
    return json.dumps(text) if pipe.strip() == "quote" else text


def _options(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    positional, options = [], {}
    index = 0
    while index < len(argv):
        if argv[index].startswith("--") and "=" in argv[index]:
            name, _, value = argv[index].partition("=")
            options[name] = value
            index += 1
        elif argv[index] == "--short":
            options["--short"] = ""
            index += 1
        elif argv[index].startswith("--"):
            options[argv[index]] = argv[index + 1]
            index += 2
        else:
            positional.append(argv[index])
            index += 1
    return positional, options


def _pull(positional: list[str], options: dict[str, str]) -> int:
    """``helm pull CHART --repo URL --version V --destination DIR`` from an http(s) repository."""
    if len(positional) != 2 or "--repo" not in options or "--destination" not in options:
        sys.stderr.write(
            "Error: the stand-in pulls only: helm pull CHART --repo URL --version V --destination DIR\n"
        )
        return 1
    chart, repo = positional[1], options["--repo"]
    if not repo.startswith(("http://", "https://")):
        sys.stderr.write(f"Error: the stand-in pulls only from http(s) repositories, not {repo}\n")
        return 1
    base = repo.rstrip("/") + "/"
    try:
        with urllib.request.urlopen(base + "index.yaml", timeout=30) as response:
            index = yaml.safe_load(response.read()) or {}
        entries = (index.get("entries") or {}).get(chart) or []
        wanted = options.get("--version")
        entry = next((e for e in entries if wanted is None or str(e.get("version")) == wanted), None)
        if entry is None:
            sys.stderr.write(f'Error: chart "{chart}" version "{wanted}" not found in {repo} repository\n')
            return 1
        url = urllib.parse.urljoin(base, entry["urls"][0])
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
    except OSError as error:
        sys.stderr.write(
            f"Error: looks like {repo!r} is not a valid chart repository or cannot be reached: {error}\n"
        )
        return 1
    Path(options["--destination"], f"{chart}-{entry['version']}.tgz").write_bytes(data)
    return 0


def _chart_folder(chart: str, scratch: str) -> Path:
    """The chart folder of CHART: itself, or the one folder its .tgz archive holds."""
    path = Path(chart)
    if path.is_file() and path.name.endswith(".tgz"):
        with tarfile.open(fileobj=io.BytesIO(path.read_bytes()), mode="r:gz") as archive:
            archive.extractall(scratch, filter="data")
        (top,) = Path(scratch).iterdir()
        return top
    return path


def main(argv: list[str]) -> int:
    if os.environ.get("HELM_STANDIN_LOG"):
        with open(os.environ["HELM_STANDIN_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps(argv) + "\n")
    positional, options = _options(argv)
    if positional == ["version"]:
        sys.stdout.write(os.environ.get("HELM_STANDIN_VERSION", "v3.99.0+gstandin") + "\n")
        return 0
    if positional[:1] == ["pull"]:
        return _pull(positional, options)
    if positional[:1] != ["template"] or len(positional) != 3 or "--repo" in options:
        sys.stderr.write("Error: the stand-in runs only: helm template RELEASE CHART_DIR|CHART.tgz [flags]\n")
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        return _template(positional[1], _chart_folder(positional[2], scratch), options)


def _template(release: str, chart_dir: Path, options: dict[str, str]) -> int:
    if not (chart_dir / "Chart.yaml").is_file():
        sys.stderr.write(
            f'Error: chart "{chart_dir}" is not a local chart folder (the stand-in never fetches)\n'
        )
        return 1
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    defaults_file = chart_dir / "values.yaml"
    values = (yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.is_file() else {}
    if "--values" in options:
        values = _merge(values, yaml.safe_load(Path(options["--values"]).read_text()) or {})
    scope = {
        "Release": {"Name": release, "Namespace": options.get("--namespace", "default")},
        "Chart": {"Name": chart["name"], "Version": chart["version"]},
        "Values": values,
    }
    out = []
    try:
        for template in sorted((chart_dir / "templates").glob("*.yaml")):
            where = f"{chart['name']}/templates/{template.name}"
            text = EXPRESSION.sub(lambda m, w=where: _evaluate(m.group(1), scope, w), template.read_text())
            if text.strip():
                out.append(f"---\n# Source: {where}\n{text.rstrip()}\n")
    except TemplateFailure as failure:
        sys.stderr.write(f"Error: {failure}\n")
        return 1
    sys.stdout.write("".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
