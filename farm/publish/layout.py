"""What a publish writes, as files per branch (pure: no git, no storage).

``folders`` (the default): one branch; each cluster's outputs in ``clusters/<cluster>/``.
``branches``: a branch ``<branch>-<cluster>`` per cluster, its outputs at the root. Beside each
``<application>.yaml`` the DSSE envelope vouching for it ``<application>.intoto.json`` (its job's
batch statement, a subject of which is this output); at the root of every branch
``keys/<keyid>.pub``, the trusted public keys that verify them.

A published cluster's folder (branch) becomes exactly its outputs, so a removed target's files go;
a skipped cluster's files stay as they were; in ``folders``, the folder of a cluster the run no
longer has is removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FOLDERS, BRANCHES = "folders", "branches"
LAYOUTS = (FOLDERS, BRANCHES)
CLUSTERS_FOLDER = "clusters/"
KEYS_FOLDER = "keys/"


@dataclass(frozen=True)
class Output:
    application: str
    digest: str
    manifests: bytes
    envelope: bytes


@dataclass(frozen=True)
class ClusterOutputs:
    cluster: str
    outputs: tuple[Output, ...]


@dataclass
class BranchTree:
    """The files a publish owns on one branch: every file under a ``replace`` prefix becomes
    exactly ``files``' ones there; a ``clusters/<name>/`` folder whose name is not in
    ``known_clusters`` is removed (when ``known_clusters`` is not None)."""

    files: dict[str, bytes] = field(default_factory=dict)
    replace: list[str] = field(default_factory=list)
    known_clusters: frozenset[str] | None = None
    clusters: list[str] = field(default_factory=list)  # the clusters whose outputs it holds


def output_files(prefix: str, outputs: tuple[Output, ...]) -> dict[str, bytes]:
    files = {}
    for output in outputs:
        files[f"{prefix}{output.application}.yaml"] = output.manifests
        files[f"{prefix}{output.application}.intoto.json"] = output.envelope
    return files


def key_files(public_keys: dict[str, str]) -> dict[str, bytes]:
    return {f"{KEYS_FOLDER}{keyid}.pub": pem.encode() for keyid, pem in sorted(public_keys.items())}


def branch_trees(
    layout: str,
    branch: str,
    published: list[ClusterOutputs],
    all_clusters: list[str],
    public_keys: dict[str, str],
) -> dict[str, BranchTree]:
    """The tree of every branch a publish writes: ``published`` clusters' outputs, the keys."""
    keys = key_files(public_keys)
    if layout == BRANCHES:
        return {
            f"{branch}-{cluster.cluster}": BranchTree(
                files={**output_files("", cluster.outputs), **keys},
                replace=[""],
                clusters=[cluster.cluster],
            )
            for cluster in published
        }
    tree = BranchTree(files=dict(keys), replace=[KEYS_FOLDER], known_clusters=frozenset(all_clusters))
    for cluster in published:
        prefix = f"{CLUSTERS_FOLDER}{cluster.cluster}/"
        tree.files.update(output_files(prefix, cluster.outputs))
        tree.replace.append(prefix)
        tree.clusters.append(cluster.cluster)
    return {branch: tree}
