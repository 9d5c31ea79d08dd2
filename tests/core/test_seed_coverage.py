"""docs/seed-coverage.md, the coverage ledger: every line carries a known status, every implemented
or refused line names the tests that show it, every named test and golden case exists, and every
type seed 002 names has a line and, where the line says implemented, a registry row."""

from __future__ import annotations

import ast
import re
from collections import Counter
from functools import cache
from pathlib import Path

from farm.core.registry import COMPONENT_TYPES, HELD_COMPONENT_TYPES, TRAIT_TYPES

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "docs" / "seed-coverage.md"
STATUSES = ("implemented", "refused", "not applicable", "open")
EVIDENCE = re.compile(r"`(tests/[^`\s]+)`")

# Every component and trait type seed 002 names (its "Per-type highlights" entries, the kind
# inventory's held kinds, and the traits its forwarding rules name), read from the seed.
SEED_COMPONENT_TYPES = frozenset(
    {
        "alertmanager",
        "apiservice",
        "artifactgenerator",
        "backendtlspolicy",
        "bucket",
        "certificate",
        "cilium-bgpadvertisement",
        "cilium-bgpclusterconfig",
        "cilium-bgpnodeconfigoverride",
        "cilium-bgppeerconfig",
        "cilium-cidrgroup",
        "cilium-clusterwidenetworkpolicy",
        "cilium-egressgatewaypolicy",
        "cilium-loadbalancerippool",
        "cilium-localredirectpolicy",
        "cilium-networkpolicy",
        "cilium-nodeconfig",
        "clusterexternalsecret",
        "clusterissuer",
        "clusterrole",
        "clusterrolebinding",
        "clustersecretstore",
        "cnpg-backup",
        "cnpg-cluster",
        "cnpg-clusterimagecatalog",
        "cnpg-database",
        "cnpg-databaserole",
        "cnpg-imagecatalog",
        "cnpg-objectstore",
        "cnpg-pooler",
        "cnpg-publication",
        "cnpg-scheduledbackup",
        "cnpg-subscription",
        "configmap",
        "crd",
        "cronjob",
        "csidriver",
        "daemonset",
        "deployment",
        "endpointslice",
        "externalsecret",
        "fluxcd-alert",
        "fluxcd-kustomization",
        "fluxcd-provider",
        "fluxcd-receiver",
        "gateway",
        "gatewayclass",
        "gitrepository",
        "grpcroute",
        "helm",
        "helmchart",
        "helmrelease",
        "helmrepository",
        "helmtemplate",
        "horizontalpodautoscaler",
        "httproute",
        "imagepolicy",
        "imagerepository",
        "imageupdateautomation",
        "ingress",
        "ingressclass",
        "issuer",
        "job",
        "limitrange",
        "listenerset",
        "manifests",
        "metallb-bfdprofile",
        "metallb-bgpadvertisement",
        "metallb-bgppeer",
        "metallb-community",
        "metallb-ipaddresspool",
        "metallb-l2advertisement",
        "mutatingadmissionpolicy",
        "mutatingadmissionpolicybinding",
        "mutatingwebhookconfiguration",
        "namespace",
        "networkpolicy",
        "oci",
        "ocirepository",
        "passthrough",
        "persistentvolume",
        "persistentvolumeclaim",
        "pod",
        "poddisruptionbudget",
        "podmonitor",
        "podtemplate",
        "postgresql",
        "priorityclass",
        "prometheus",
        "prometheus-probe",
        "prometheusrule",
        "referencegrant",
        "replicaset",
        "replicationcontroller",
        "replicationdestination",
        "replicationsource",
        "resourcequota",
        "resourcesetinputprovider",
        "role",
        "rolebinding",
        "runtimeclass",
        "secret",
        "secretstore",
        "service",
        "serviceaccount",
        "servicecidr",
        "servicemonitor",
        "statefulset",
        "storageclass",
        "tcproute",
        "thanosruler",
        "tlsroute",
        "udproute",
        "validatingadmissionpolicy",
        "validatingadmissionpolicybinding",
        "validatingwebhookconfiguration",
        "volumeattributesclass",
        "webservice",
        "worker",
    }
)
SEED_TRAIT_TYPES = frozenset(
    {
        "certificate",
        "cilium-networkpolicy",
        "configmap",
        "expose",
        "external-secret",
        "fluxcd-patches",
        "fluxcd-postbuild",
        "force-replace",
        "httproute",
        "ingress",
        "networkpolicy",
        "prune-protection",
        "pvc",
        "rbac",
        "scaler",
        "secret",
        "security-context",
        "topology-spread",
        "volsync",
    }
)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


@cache
def _rows() -> list[tuple[str, list[str]]]:
    """Every data row of every table, with the header row of its table."""
    rows: list[tuple[str, list[str]]] = []
    header = ""
    for line in LEDGER.read_text().splitlines():
        if not line.startswith("|"):
            header = ""
            continue
        if not header:
            header = line
            continue
        if set(line.replace("|", "").strip()) <= {"-", " "}:
            continue
        rows.append((header, _cells(line)))
    return rows


def _status(cells: list[str]) -> str | None:
    found = [cell for cell in cells if cell in STATUSES]
    return found[0] if len(found) == 1 else None


@cache
def _type_lines() -> dict[tuple[str, str], str]:
    """(type, role) -> status, from the tables whose header starts with ``| type | role |``."""
    lines = {}
    for header, cells in _rows():
        if _cells(header)[:2] == ["type", "role"]:
            lines[(cells[0].strip("`"), cells[1])] = _status(cells) or ""
    return lines


def _test_exists(reference: str) -> bool:
    path, _, name = reference.partition("::")
    file = ROOT / path
    if not name:
        return file.is_dir() and (file / "app.yaml").exists() if "tests/golden/" in path else file.exists()
    if not file.is_file():
        return False
    tree = ast.parse(file.read_text())
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


def test_every_ledger_line_has_exactly_one_known_status() -> None:
    bad = [" | ".join(cells) for _, cells in _rows() if _status(cells) is None]
    assert _rows(), "the ledger holds no table"
    assert bad == []


def test_every_implemented_or_refused_line_names_the_tests_that_show_it() -> None:
    bare = [
        cells[0]
        for _, cells in _rows()
        if _status(cells) in ("implemented", "refused") and not EVIDENCE.findall(" ".join(cells))
    ]
    assert bare == []


def test_every_test_and_golden_case_the_ledger_names_exists() -> None:
    references = {ref for _, cells in _rows() for ref in EVIDENCE.findall(" ".join(cells))}
    missing = sorted(ref for ref in references if not _test_exists(ref))
    assert references
    assert missing == []


def test_every_type_the_seed_names_has_a_ledger_line() -> None:
    lines = _type_lines()
    missing = [f"component {t}" for t in sorted(SEED_COMPONENT_TYPES) if (t, "component") not in lines]
    missing += [f"trait {t}" for t in sorted(SEED_TRAIT_TYPES) if (t, "trait") not in lines]
    assert missing == []


def test_every_type_the_seed_names_has_a_registry_row_unless_its_line_says_why() -> None:
    tables = {"component": COMPONENT_TYPES, "trait": TRAIT_TYPES}
    wrong = []
    for (name, role), status in _type_lines().items():
        registered = name in tables[role]
        if status == "implemented" and not registered:
            wrong.append(f"{role} {name}: implemented, but the registry has no row for it")
        if status != "implemented" and registered:
            wrong.append(f"{role} {name}: registered, but its line says {status}")
        if status == "refused" and role == "component" and name not in HELD_COMPONENT_TYPES:
            wrong.append(f"component {name}: refused, but it is no held kind")
    assert wrong == []


def test_every_registered_type_is_a_type_the_seed_names() -> None:
    assert sorted(set(COMPONENT_TYPES) - SEED_COMPONENT_TYPES) == []
    assert sorted(set(TRAIT_TYPES) - SEED_TRAIT_TYPES) == []
    assert sorted(set(HELD_COMPONENT_TYPES) - SEED_COMPONENT_TYPES) == []


def test_the_counts_the_ledger_states_are_its_lines() -> None:
    counts = Counter(_status(cells) for _, cells in _rows())
    stated = ", ".join(f"{status}: {counts[status]}" for status in STATUSES)
    assert f"Lines per status: {stated}." in LEDGER.read_text()
