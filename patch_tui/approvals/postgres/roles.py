"""Least-privilege roles for a team inbox (`patch-tui store roles` prints this SQL).

- the **agent** role (serve and guard on the machines that run calls): records held calls and
  their runs, reads decisions and grants, counts a grant's use. It cannot write a signature, a
  grant or a grant signature: nothing an agent's machine holds can even store an approval.
- the **approver** role (the inbox on people's laptops): reads everything, writes signatures
  and the decisions they make, grants and their signatures and revocations, and settles expiry.
  It cannot create held calls or record that something ran.

Both can change an action's status (deciding and running are both transitions of that row), so
neither role is what stops a forged approval: a row set to `approved` by hand has no signature
that verifies, and the runner refuses it (approvals/decisions.py). The roles keep honest
mistakes and a compromised machine's reach small; the signatures keep the decision.
"""

from __future__ import annotations

import re

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

_TABLES = (
    "actions",
    "events",
    "signatures",
    "grants",
    "grant_signatures",
    "recent_outputs",
    "store_version",
    "schema_version",
)


def role_sql(agent: str = "patch_tui_agent", approver: str = "patch_tui_approver") -> str:
    """GRANT statements for the two roles (which must exist: CREATE ROLE … LOGIN first)."""
    for name in (agent, approver):
        if not _NAME.match(name):
            raise ValueError(f"{name!r} is not a plain role name (a-z, 0-9, _)")
    tables = ", ".join(_TABLES)
    return "\n".join(
        [
            f"GRANT USAGE ON SCHEMA public TO {agent}, {approver};",
            f"GRANT SELECT ON {tables} TO {agent}, {approver};",
            f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {agent}, {approver};",
            # Every write transaction takes its turn on the version row.
            f"GRANT UPDATE ON store_version TO {agent}, {approver};",
            "-- agents: hold calls, claim and finish them, remember outputs, count grant uses",
            f"GRANT INSERT, UPDATE ON actions TO {agent};",
            f"GRANT INSERT ON events TO {agent};",
            f"GRANT INSERT, DELETE ON recent_outputs TO {agent};",
            f"GRANT UPDATE (uses, last_used_at) ON grants TO {agent};",
            "-- approvers: sign, decide, grant, revoke, expire",
            f"GRANT UPDATE ON actions TO {approver};",
            f"GRANT INSERT ON events, signatures, grants, grant_signatures TO {approver};",
            f"GRANT UPDATE (revoked_at, revoked_by) ON grants TO {approver};",
            "",
        ]
    )
