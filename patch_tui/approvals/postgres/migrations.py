"""The PostgreSQL store's schema: MIGRATIONS[i] takes it from version i to i + 1. Append, never
edit. Applied by `patch-tui store migrate`, or on first use when the connecting role owns the
schema (`PgConnection._migrate`), each in one transaction under an advisory lock, so two
processes starting at once migrate once.

The tables mean what SQLite's do (approvals/schema.py), with the same columns and the same text
times (ISO 8601 UTC, fixed width, compared as text: `COLLATE "C"` so the database's locale never
reorders them). Two more:
- `store_version`: one row, one number. Every write transaction first adds one to it (so writers
  take turns, as SQLite's BEGIN IMMEDIATE makes them; readers never wait) and sends it with
  NOTIFY when it commits: `data_version()` and the change feed (feed.py) read it.
- `schema_version`: the version applied, and when.
"""

from __future__ import annotations

from patch_tui.approvals.values import KINDS, STATUSES

_STATUS_CHECK = ", ".join(f"'{s}'" for s in STATUSES)
_KIND_CHECK = ", ".join(f"'{k}'" for k in KINDS)

# The channel every change is announced on (the payload: the new store_version).
CHANNEL = "patch_tui_store"

MIGRATIONS: tuple[str, ...] = (
    f"""
    CREATE TABLE actions (
        id              BIGSERIAL PRIMARY KEY,
        token           TEXT NOT NULL UNIQUE,
        kind            TEXT NOT NULL CHECK (kind IN ({_KIND_CHECK})),
        tool            TEXT NOT NULL,
        version         TEXT NOT NULL,
        source_sha256   TEXT NOT NULL,
        tool_path       TEXT,
        args_json       TEXT NOT NULL,
        args_sha256     TEXT NOT NULL,
        reason          TEXT NOT NULL,
        details_json    TEXT,
        status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ({_STATUS_CHECK})),
        created_at      TEXT COLLATE "C" NOT NULL,
        expires_at      TEXT COLLATE "C" NOT NULL,
        decided_at      TEXT COLLATE "C",
        decided_by      TEXT,
        note            TEXT,
        claimed_at      TEXT COLLATE "C",
        claimed_by      TEXT,
        claim_host      TEXT,
        claim_pid       INTEGER,
        claim_pid_start TEXT,
        finished_at     TEXT COLLATE "C",
        result_json     TEXT,
        upstream_token  TEXT,
        proposed_args_json TEXT,
        grant_id        BIGINT
    );
    CREATE INDEX actions_by_status ON actions (status, created_at);
    CREATE INDEX actions_by_created ON actions (created_at);
    CREATE INDEX actions_open_expiry ON actions (expires_at) WHERE status IN ('pending', 'approved');

    CREATE TABLE events (
        id        BIGSERIAL PRIMARY KEY,
        action_id BIGINT NOT NULL REFERENCES actions (id),
        at        TEXT COLLATE "C" NOT NULL,
        actor     TEXT NOT NULL,
        event     TEXT NOT NULL,
        detail    TEXT NOT NULL DEFAULT '{{}}'
    );
    CREATE INDEX events_by_action ON events (action_id, id);

    -- Signed statements (approvals/statements.py's envelopes). No uniqueness by approver name:
    -- a row is worth only what its verified signature says, and a row planted under someone's
    -- name must not stop them from signing (the quorum counts distinct verified approvers).
    CREATE TABLE signatures (
        id          BIGSERIAL PRIMARY KEY,
        action_id   BIGINT NOT NULL REFERENCES actions (id),
        approver    TEXT NOT NULL,
        decision    TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
        at          TEXT COLLATE "C" NOT NULL,
        note        TEXT,
        args_sha256 TEXT NOT NULL,
        envelope    TEXT NOT NULL
    );
    CREATE INDEX signatures_by_action ON signatures (action_id, id);

    CREATE TABLE grants (
        id            BIGSERIAL PRIMARY KEY,
        grant_id      TEXT UNIQUE,
        tool          TEXT NOT NULL,
        version       TEXT NOT NULL,
        source_sha256 TEXT NOT NULL,
        tool_path     TEXT,
        patterns_json TEXT NOT NULL,
        created_at    TEXT COLLATE "C" NOT NULL,
        created_by    TEXT NOT NULL,
        expires_at    TEXT COLLATE "C" NOT NULL,
        revoked_at    TEXT COLLATE "C",
        revoked_by    TEXT,
        uses          INTEGER NOT NULL DEFAULT 0,
        last_used_at  TEXT COLLATE "C",
        revocation    TEXT
    );
    CREATE INDEX grants_by_tool ON grants (tool, expires_at);
    CREATE TABLE grant_signatures (
        id        BIGSERIAL PRIMARY KEY,
        grant_row BIGINT NOT NULL REFERENCES grants (id),
        approver  TEXT NOT NULL,
        at        TEXT COLLATE "C" NOT NULL,
        envelope  TEXT NOT NULL
    );
    CREATE INDEX grant_signatures_by_grant ON grant_signatures (grant_row, id);

    CREATE TABLE recent_outputs (
        id          BIGSERIAL PRIMARY KEY,
        tool        TEXT NOT NULL,
        text        TEXT NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL
    );

    CREATE TABLE store_version (
        one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
        n   BIGINT NOT NULL
    );
    INSERT INTO store_version (one, n) VALUES (TRUE, 0);

    -- Append-only: the audit trail and the signatures cannot be edited through SQL by mistake
    -- (a role that owns the tables can drop the triggers: what stops a forged approval is the
    -- signature check where calls run, not the database).
    CREATE FUNCTION patch_tui_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% rows are append-only', TG_TABLE_NAME;
    END;
    $$;
    CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION patch_tui_append_only();
    CREATE TRIGGER signatures_append_only BEFORE UPDATE OR DELETE ON signatures
        FOR EACH ROW EXECUTE FUNCTION patch_tui_append_only();
    CREATE TRIGGER grant_signatures_append_only BEFORE UPDATE OR DELETE ON grant_signatures
        FOR EACH ROW EXECUTE FUNCTION patch_tui_append_only();
    """,
    # 2: a grant's revocation is never taken back. Its signatures still verify without it (red
    # team: clearing revoked_at brought a revoked grant back), as the SQLite store's migration 5.
    """
    CREATE FUNCTION patch_tui_revocation_stays() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.revoked_at IS NOT NULL AND (NEW.revoked_at IS DISTINCT FROM OLD.revoked_at
                OR NEW.revocation IS DISTINCT FROM OLD.revocation) THEN
            RAISE EXCEPTION 'a revocation is never taken back';
        END IF;
        RETURN NEW;
    END;
    $$;
    CREATE TRIGGER grants_revocation_stays BEFORE UPDATE ON grants
        FOR EACH ROW EXECUTE FUNCTION patch_tui_revocation_stays();
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

# The table that says which migration was applied (created outside the migrations: it is what
# tells a new database from an old one).
VERSION_TABLE = """
    CREATE TABLE IF NOT EXISTS schema_version (
        version    INTEGER NOT NULL,
        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
"""

# Any fixed number: the advisory lock migrations are applied under.
MIGRATION_LOCK = 0x70617463  # "patc"
