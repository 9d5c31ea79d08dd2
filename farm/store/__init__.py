"""Storage: SQL rows (SQLAlchemy 2, PostgreSQL or SQLite) and content-addressed blobs (S3 or a folder).

Write order is always object storage first, then the row that points at the blob; ``farm gc``
finds orphans both ways.
"""
