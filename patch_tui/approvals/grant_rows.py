"""The store's standing-grant rows, each with its signatures, for both backends
(approvals/sql_backend.py): storage only, no judgement.

What a grant approves, and whether its signatures count, is approvals/grants.py's and
approvals/decisions.py's; here a grant is a row, its signers' envelopes (the maker's first, then
any further approver's for a grant quorum) and its revocation."""

from __future__ import annotations

import json
from typing import Any

from patch_tui.approvals.records import Grant, Pattern, Signature
from patch_tui.approvals.sql_backend import Conn, SqlBackend
from patch_tui.approvals.values import StoreError, now_iso

_COLUMNS = (
    "id, tool, version, source_sha256, patterns_json, created_at, created_by, expires_at, "
    "revoked_at, revoked_by, uses, last_used_at, grant_id, tool_path, revocation"
)


class GrantNotFound(StoreError):
    pass


def _patterns(text: str) -> tuple[Pattern, ...]:
    try:
        data = json.loads(text)
        return tuple(Pattern(str(k), str(g)) for k, g in data)
    except (ValueError, TypeError):
        # A damaged row: no pattern at all would match every call, so it matches none instead
        # (a key no call has).
        return (Pattern("\x00damaged", "\x00"),)


def _revocation(text: str | None, by: str | None, at: str | None) -> Signature | None:
    if text is None:
        return None
    return Signature(by or "", "revoke", at or "", text)


class GrantRows(SqlBackend):
    def _grant_rows(
        self, conn: Conn, where: str, params: tuple[Any, ...], *, lock: bool = False
    ) -> list[Grant]:
        sql = f"SELECT {_COLUMNS} FROM grants {where} ORDER BY id DESC"
        rows = conn.execute(sql + (self._FOR_UPDATE if lock else ""), params).fetchall()
        ids = [int(r[0]) for r in rows]
        sigs: dict[int, list[Signature]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):  # SQLite takes at most 999 parameters
            chunk = ids[start : start + 500]
            for grant_row, approver, at, envelope in conn.execute(
                "SELECT grant_row, approver, at, envelope FROM grant_signatures "
                f"WHERE grant_row IN ({', '.join('?' * len(chunk))}) ORDER BY id",
                chunk,
            ).fetchall():
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
                revocation=_revocation(r[14], r[9], r[8]),
            )
            for r in rows
        ]

    def _grant_in(self, conn: Conn, grant_id: int, *, lock: bool = False) -> Grant | None:
        found = self._grant_rows(conn, "WHERE id = ?", (grant_id,), lock=lock)
        return found[0] if found else None

    def _grants_read(self, where: str, params: tuple[Any, ...]) -> list[Grant]:
        """Grants read outside a write (in a transaction of their own where the backend has
        them: the grants and their signatures as of one moment)."""
        with self._read_conn() as conn:
            return self._grant_rows(conn, where, params)

    def add_grant(self, grant: Grant) -> Grant:
        """A new grant row with its maker's signature (grant.signatures[0])."""
        if not grant.signatures or grant.grant_id is None:
            raise ValueError("a grant is stored with its maker's signature")
        maker = grant.signatures[0]
        with self._write() as conn:
            row = self._insert_id(
                conn,
                "INSERT INTO grants (tool, version, source_sha256, patterns_json, created_at, "
                "created_by, expires_at, grant_id, tool_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            )
            conn.execute(
                "INSERT INTO grant_signatures (grant_row, approver, at, envelope) "
                "VALUES (?, ?, ?, ?)",
                (row, maker.approver, maker.at, maker.envelope),
            )
            found = self._grant_in(conn, row)
        assert found is not None
        return found

    def add_grant_signature(self, grant_id: int, signature: Signature) -> Grant:
        """A further approver's signature on a standing grant (a grant quorum)."""
        at = now_iso(self._now())
        with self._write() as conn:
            grant = self._grant_in(conn, grant_id, lock=True)
            if grant is None:
                raise GrantNotFound(f"no grant {grant_id} (see `patch-tui inbox grants`)")
            if grant.state(at) != "active":
                raise StoreError(f"grant {grant_id} is {grant.state(at)}; it cannot be signed")
            conn.execute(
                "INSERT INTO grant_signatures (grant_row, approver, at, envelope) "
                "VALUES (?, ?, ?, ?)",
                (grant_id, signature.approver, signature.at, signature.envelope),
            )
            found = self._grant_in(conn, grant_id)
        assert found is not None
        return found

    def revoke_grant(self, grant_id: int, signature: Signature) -> Grant:
        """Ends a grant now. Revoking a revoked or expired grant is refused with why."""
        at = signature.at
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE grants SET revoked_at = ?, revoked_by = ?, revocation = ? "
                "WHERE id = ? AND revoked_at IS NULL AND expires_at > ?",
                (at, signature.approver, signature.envelope, grant_id, at),
            )
            changed = cur.rowcount
            grant = self._grant_in(conn, grant_id)
        if grant is None:
            raise GrantNotFound(f"no grant {grant_id} (see `patch-tui inbox grants`)")
        if changed != 1:
            if grant.revoked_at is not None:
                raise StoreError(
                    f"grant {grant_id} was already revoked by {grant.revoked_by} at "
                    f"{grant.revoked_at}"
                )
            raise StoreError(f"grant {grant_id} already expired at {grant.expires_at}")
        return grant

    def get_grant(self, grant_id: int) -> Grant | None:
        found = self._grants_read("WHERE id = ?", (grant_id,))
        return found[0] if found else None

    def list_grants(self, *, tool: str | None = None, ended: bool = False) -> list[Grant]:
        """Standing grants, newest first (`ended=True` adds the expired and revoked ones)."""
        where: list[str] = []
        params: list[Any] = []
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        if not ended:
            where.append("revoked_at IS NULL AND expires_at > ?")
            params.append(now_iso(self._now()))
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        return self._grants_read(clause, tuple(params))
