"""The PostgreSQL store's standing grants: rows with their signatures (the maker's first, then
any further approver's for a grant quorum) and their revocation. Storage only, with the meaning
SQLite's grant rows have: whether a grant's signatures are good is approvals/decisions.py's
judgement, at use."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from patch_tui.approvals.postgres.connection import PgConnection
from patch_tui.approvals.records import Grant, Pattern, Signature
from patch_tui.approvals.values import StoreError, now_iso

Conn = psycopg.Connection[Any]

_GRANT_COLUMNS = (
    "id, tool, version, source_sha256, patterns_json, created_at, created_by, expires_at, "
    "revoked_at, revoked_by, uses, last_used_at, grant_id, tool_path, revocation"
)


def _patterns(text: str) -> tuple[Pattern, ...]:
    try:
        return tuple(Pattern(str(k), str(g)) for k, g in json.loads(text))
    except (ValueError, TypeError):
        # A damaged row: no pattern at all would match every call, so it matches none instead.
        return (Pattern("\x00damaged", "\x00"),)


def _missing(grant_id: int) -> StoreError:
    return StoreError(f"no grant {grant_id} (see `patch-tui inbox grants`)")


class PgGrants(PgConnection):
    def add_grant(self, grant: Grant) -> Grant:
        """A new grant row with its maker's signature (grant.signatures[0])."""
        if not grant.signatures or grant.grant_id is None:
            raise ValueError("a grant is stored with its maker's signature")
        maker = grant.signatures[0]
        with self._write() as conn:
            row = conn.execute(
                "INSERT INTO grants (tool, version, source_sha256, patterns_json, created_at, "
                "created_by, expires_at, grant_id, tool_path) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    grant.tool,
                    grant.version,
                    grant.source_sha256,
                    json.dumps([[p.key, p.glob] for p in grant.patterns], ensure_ascii=False),
                    grant.created_at,
                    grant.created_by,
                    grant.expires_at,
                    grant.grant_id,
                    grant.tool_path,
                ),
            ).fetchone()
            assert row is not None
            conn.execute(
                "INSERT INTO grant_signatures (grant_row, approver, at, envelope) "
                "VALUES (%s, %s, %s, %s)",
                (int(row[0]), maker.approver, maker.at, maker.envelope),
            )
            made = self._grant(conn, int(row[0]))
        assert made is not None
        return made

    def add_grant_signature(self, grant_id: int, signature: Signature) -> Grant:
        """A further approver's signature on a standing grant (a grant quorum)."""
        at = now_iso(self._now())
        with self._write() as conn:
            grant = self._grant(conn, grant_id, lock=True)
            if grant is None:
                raise _missing(grant_id)
            if grant.state(at) != "active":
                raise StoreError(f"grant {grant_id} is {grant.state(at)}; it cannot be signed")
            conn.execute(
                "INSERT INTO grant_signatures (grant_row, approver, at, envelope) "
                "VALUES (%s, %s, %s, %s)",
                (grant_id, signature.approver, signature.at, signature.envelope),
            )
            made = self._grant(conn, grant_id)
        assert made is not None
        return made

    def revoke_grant(self, grant_id: int, signature: Signature) -> Grant:
        """Ends a grant now. Revoking a revoked or expired grant is refused with why."""
        at = signature.at
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE grants SET revoked_at = %s, revoked_by = %s, revocation = %s "
                "WHERE id = %s AND revoked_at IS NULL AND expires_at > %s",
                (at, signature.approver, signature.envelope, grant_id, at),
            )
            changed = cur.rowcount
            grant = self._grant(conn, grant_id)
        if grant is None:
            raise _missing(grant_id)
        if changed != 1:
            if grant.revoked_at is not None:
                raise StoreError(
                    f"grant {grant_id} was already revoked by {grant.revoked_by} at "
                    f"{grant.revoked_at}"
                )
            raise StoreError(f"grant {grant_id} already expired at {grant.expires_at}")
        return grant

    def get_grant(self, grant_id: int) -> Grant | None:
        found = self._grants_read("WHERE id = %s", (grant_id,))
        return found[0] if found else None

    def list_grants(self, *, tool: str | None = None, ended: bool = False) -> list[Grant]:
        """Standing grants, newest first (`ended=True` adds the expired and revoked ones)."""
        where: list[str] = []
        params: list[Any] = []
        if tool is not None:
            where.append("tool = %s")
            params.append(tool)
        if not ended:
            where.append("revoked_at IS NULL AND expires_at > %s")
            params.append(now_iso(self._now()))
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        return self._grants_read(clause, tuple(params))

    # -- rows ---------------------------------------------------------------------------------

    def _grants_read(self, where: str, params: tuple[Any, ...]) -> list[Grant]:
        try:
            with self._pool.connection() as conn:
                return self._grant_rows(conn, where, params)
        except psycopg.Error as exc:
            raise self._translate(exc) from None

    def _grant(self, conn: Conn, grant_row: int, *, lock: bool = False) -> Grant | None:
        found = self._grant_rows(conn, "WHERE id = %s", (grant_row,), lock=lock)
        return found[0] if found else None

    def _grant_rows(
        self, conn: Conn, where: str, params: tuple[Any, ...], *, lock: bool = False
    ) -> list[Grant]:
        sql = f"SELECT {_GRANT_COLUMNS} FROM grants {where} ORDER BY id DESC"
        rows = conn.execute((sql + (" FOR UPDATE" if lock else "")).encode(), params).fetchall()
        ids = [int(r[0]) for r in rows]
        sigs: dict[int, list[Signature]] = {i: [] for i in ids}
        if ids:
            for grant_row, approver, at, envelope in conn.execute(
                "SELECT grant_row, approver, at, envelope FROM grant_signatures "
                "WHERE grant_row = ANY(%s) ORDER BY id",
                (ids,),
            ):
                sigs[int(grant_row)].append(Signature(approver, "grant", at, envelope))
        return [
            Grant(
                id=int(r[0]),
                tool=r[1],
                version=r[2],
                source_sha256=r[3],
                patterns=_patterns(r[4]),
                created_at=r[5],
                created_by=r[6],
                expires_at=r[7],
                revoked_at=r[8],
                revoked_by=r[9],
                uses=int(r[10]),
                last_used_at=r[11],
                grant_id=r[12],
                tool_path=r[13],
                signatures=tuple(sigs[int(r[0])]),
                revocation=None
                if r[14] is None
                else Signature(r[9] or "", "revoke", r[8] or "", r[14]),
            )
            for r in rows
        ]
