"""Evidence: canonical JSON and digests, in-toto statements, DSSE envelopes, ed25519 keys, verification.

Every digest the farm computes over structured data goes through ``canonical.canonical_json``;
every signature goes through ``dsse``; every check of a stored envelope goes through ``verify``.
"""
