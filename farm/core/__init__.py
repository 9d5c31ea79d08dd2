"""The handler core: pure functions from launcher documents to Kubernetes manifests.

Nothing in this package touches the database, the network, the clock or randomness, and nothing
here imports from the rest of ``farm`` (``tests/test_core_imports.py`` checks the import graph).
"""

CORE_VERSION = "0.1.0"
