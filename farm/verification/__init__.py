"""``farm verify --all``: every check of the store, as ``git fsck`` is for a repository.

``registry.CHECKS`` lists the check kinds; adding one is one function registered there.
"""
