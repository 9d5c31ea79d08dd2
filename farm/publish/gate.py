"""``--require qualified``: a cluster's outputs publish only while each of its subjects
(ClusterProfile, profile value) is qualified with current evidence.

The states are recomputed from the records against the run's own catalog and today's clock
(``refresh_all``), so evidence that expired, or that the run's catalog no longer matches, does not
count; the stored state is never trusted as it stands.
"""

from __future__ import annotations

from farm.catalog import CatalogSnapshot
from farm.qualification.service import refresh_all, subjects_of
from farm.qualification.states import QUALIFIED
from farm.qualification.subjects import format_subject
from farm.store.context import Storage

REQUIRE_NONE, REQUIRE_QUALIFIED = "none", "qualified"
REQUIREMENTS = (REQUIRE_NONE, REQUIRE_QUALIFIED)


def unqualified_reasons(
    storage: Storage, snapshot: CatalogSnapshot, clusters: list[str], trusted_keyids: frozenset[str]
) -> dict[str, str]:
    """Cluster → why it may not publish, for each of ``clusters`` with a subject not qualified."""
    board = refresh_all(storage, snapshot, trusted_keyids, "publish")
    subjects = subjects_of(snapshot)
    reasons = {}
    for cluster in clusters:
        lacking = []
        for name, selection in subjects:
            if name != cluster:
                continue
            state, reason = board.get((name, selection), ("unqualified", ""))
            if state != QUALIFIED:
                lacking.append(
                    f"{format_subject(name, selection)} is {state}{f' ({reason})' if reason else ''}"
                )
        if lacking:
            reasons[cluster] = "not qualified with current evidence: " + "; ".join(lacking)
    return reasons
