"""The confirmation store on PostgreSQL (the team inbox): `--store postgresql://…`.

    migrations   the schema, versioned (`patch-tui store migrate`, or on first use by its owner)
    connection   the pool, the write transaction, errors in words (never a password), the feed
    store        PgStore: the ApprovalStore interface (approvals/backend.py) in plain SQL
    feed         LISTEN/NOTIFY: a change wakes every waiter at once; reconnects with backoff

psycopg (the `postgres` extra) is imported only here, when such a store is opened.
"""
