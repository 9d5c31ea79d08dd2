"""The farm daemon: a resident process per ``FARM_HOME`` that runs ``farm run`` and ``farm plan``
with its imports, its local pool's workers and their caches already warm (``farm daemon start``)."""
