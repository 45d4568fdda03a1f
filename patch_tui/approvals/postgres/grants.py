"""The PostgreSQL store's standing grants: rows with their signatures (the maker's first, then
any further approver's for a grant quorum) and their revocation. Plain storage: whether a
grant's signatures are good is approvals/decisions.py's judgement, at use."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from patch_tui.approvals.postgres.connection import PgConnection
from patch_tui.approvals.records import Grant, Pattern, Signature
from patch_tui.approvals.values import StoreError, canonical_json, now_iso

Conn = psycopg.Connection[Any]

_GRANT_COLUMNS = (
    "id, grant_id, tool, version, source_sha256, tool_path, patterns_json, created_at, "
    "created_by, expires_at, revoked_at, revoked_by, uses, last_used_at"
)


class PgGrants(PgConnection):
    def add_grant(self, grant: Grant) -> Grant:
        patterns = canonical_json([[p.key, p.glob] for p in grant.patterns])
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO grants (grant_id, tool, version, source_sha256, tool_path, "
                "patterns_json, created_at, created_by, expires_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    grant.grant_id,
                    grant.tool,
                    grant.version,
                    grant.source_sha256,
                    grant.tool_path,
                    patterns,
                    grant.created_at,
                    grant.created_by,
                    grant.expires_at,
                ),
            ).fetchone()
            assert row is not None
            for signature in grant.signatures:
                self._add_grant_signature(conn, int(row[0]), signature)
            made = self._grant(conn, int(row[0]))
        assert made is not None
        return made

    def add_grant_signature(self, grant_id: int, signature: Signature) -> Grant:
        with self._write() as conn:
            if self._grant(conn, grant_id, lock=True) is None:
                raise StoreError(f"no grant {grant_id}")
            self._add_grant_signature(conn, grant_id, signature)
            made = self._grant(conn, grant_id)
        assert made is not None
        return made

    def _add_grant_signature(self, conn: Conn, grant_row: int, signature: Signature) -> None:
        conn.execute(
            "INSERT INTO grant_signatures (grant_row, approver, decision, at, envelope, note) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (
                grant_row,
                signature.approver,
                signature.decision,
                signature.at,
                signature.envelope,
                signature.note,
            ),
        )

    def revoke_grant(self, grant_id: int, signature: Signature) -> Grant:
        with self._write() as conn:
            if self._grant(conn, grant_id, lock=True) is None:
                raise StoreError(f"no grant {grant_id}")
            cur = conn.execute(
                "UPDATE grants SET revoked_at = %s, revoked_by = %s "
                "WHERE id = %s AND revoked_at IS NULL",
                (signature.at, signature.approver, grant_id),
            )
            if cur.rowcount == 1:
                self._add_grant_signature(conn, grant_id, signature)
            made = self._grant(conn, grant_id)
        assert made is not None
        return made

    def get_grant(self, grant_id: int) -> Grant | None:
        try:
            with self._pool.connection() as conn:
                return self._grant(conn, grant_id)
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def list_grants(self, *, tool: str | None = None, ended: bool = False) -> list[Grant]:
        sql = f"SELECT {_GRANT_COLUMNS} FROM grants"
        where: list[str] = []
        params: list[Any] = []
        if tool is not None:
            where.append("tool = %s")
            params.append(tool)
        if not ended:
            where.append("revoked_at IS NULL AND expires_at > %s")
            params.append(now_iso(self._now()))
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        try:
            with self._pool.connection() as conn:
                rows = conn.execute(sql.encode(), params).fetchall()
                return [self._grant_from_row(conn, r) for r in rows]
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def _grant(self, conn: Conn, grant_row: int, *, lock: bool = False) -> Grant | None:
        sql = f"SELECT {_GRANT_COLUMNS} FROM grants WHERE id = %s" + (" FOR UPDATE" if lock else "")
        row = conn.execute(sql.encode(), (grant_row,)).fetchone()
        return None if row is None else self._grant_from_row(conn, row)

    def _grant_from_row(self, conn: Conn, row: tuple[Any, ...]) -> Grant:
        sigs = conn.execute(
            "SELECT approver, decision, at, envelope, note FROM grant_signatures "
            "WHERE grant_row = %s ORDER BY id",
            (row[0],),
        ).fetchall()
        signatures = [Signature(s[0], s[1], s[2], s[3], s[4]) for s in sigs]
        try:
            patterns = tuple(Pattern(str(k), str(g)) for k, g in json.loads(row[6]))
        except (ValueError, TypeError):
            patterns = ()  # a damaged row matches nothing
        return Grant(
            id=int(row[0]),
            grant_id=row[1],
            tool=row[2],
            version=row[3],
            source_sha256=row[4],
            tool_path=row[5],
            patterns=patterns,
            created_at=row[7],
            created_by=row[8],
            expires_at=row[9],
            revoked_at=row[10],
            revoked_by=row[11],
            uses=int(row[12]),
            last_used_at=row[13],
            signatures=tuple(s for s in signatures if s.decision == "grant"),
            revocation=next((s for s in signatures if s.decision == "revoke"), None),
        )
