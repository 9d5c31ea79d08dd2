"""``farm publish``: a run's signed outputs delivered where GitOps agents read them.

- ``layout.py``: which files a publish writes (pure): a folder per cluster on one branch, or a
  branch per cluster; each output beside its DSSE envelope, the trusted public keys at the root.
- ``gate.py``: ``--require qualified``: a cluster publishes only while every subject of it is
  qualified with current evidence.
- ``git.py`` (the git binary), ``oci.py`` (the distribution API over HTTP): the destinations.
- ``record.py``: the signed publish record (an in-toto Statement in a DSSE envelope).
- ``service.py``: one publish end to end, recorded pending → done or failed, retried with backoff.
- ``verify.py``: ``farm verify --all``'s check of every publish record.
"""
