"""Standing grants: "allow calls like this, for a while", narrow and bound to one tool version.

    grant = create(store, tool, version, source_sha256, patterns, seconds)   -> Grant
    list_grants(store, ended=False)                                          -> list[Grant]
    revoke(store, grant_id)                                                  -> Grant
    listing(store, toolbox, ended=False)              -> list[Listed]   what a person is shown
    apply(store, action)                                   -> Decision | None   (approved by a grant)
    matches(grant, kind, tool, source_sha256, args, now)   -> bool      the rule, as a pure function
    literal_glob(text)                                     -> str       a glob matching text only

A grant names a tool, the sha256 of the tool's source when it was granted, an expiry, and a list
of `KEY=GLOB` patterns. A later `human_confirm` hold of that tool is approved at once, by the grant,
when every one of these holds (and only then):

- the hold is a `human_confirm` one: a `tainted_input` hold is about where the data came from, not
  what the call does, so no standing rule may wave it through;
- the tool's name and source sha256 are the granted ones: any change to the file ends the grant
  (as it ends a pending approval: a person granted what they read);
- the grant is not revoked and not expired;
- every pattern matches: the argument KEY is present in the call (a missing key never matches,
  even `KEY=*`), and its value matches GLOB. A string is matched as it is; any other value (number,
  boolean, null, array, object) is matched against its canonical JSON text (sorted keys, no
  spaces), so `count=1?` matches 10 to 19, `dry_run=true` matches the boolean true only, and
  `tags=*"prod"*` matches an array holding "prod". The glob is `fnmatch`'s, case-sensitive:
  `*` (anything, including `/` and newlines), `?`, `[abc]`, `[!abc]`. Several patterns on one key
  must all match.

The approval is the store's own (`Store.approve(grant=...)`): one transaction re-checks the grant
(not revoked, unexpired, same source), counts the use and approves, and the `approved` event names
the grant; the action is then confirmed through the gate like any other, so every check confirm
makes still applies.

A grant whose tool file changed (or went) stays standing in the store, and simply never matches
again. `listing` is what the CLI (`inbox grants`) and the TUI's grants screen show: it compares the
tool file's sha256 with the grant's and says such a grant ended, and why (`Listed`). The file is
found where the grant's calls came from (the tool_path of the actions with the granted source),
else in the toolbox by the tool's name. If neither finds one (a file outside the toolbox that no
call has used yet, a guard grant for another server's tool, a toolbox tool deleted before any call)
the grant is shown active with "tool file not found": it may well still approve, and showing a
live grant as ended would hide it. The granted bytes put back make an ended grant apply again, so
revoking it stays possible.

Grant rows live in the store's `grants` table; they are never deleted (revoking sets revoked_at), so
an audit can always say which grant approved what.
"""

from __future__ import annotations

import fnmatch
import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from patch_tui.approvals.store import Action, Decision, Store, StoreError, canonical_json, now_iso

if TYPE_CHECKING:
    from patch_tui.runtime.toolbox import Toolbox

# Longest grant: a week. A standing "always" is exactly what this feature exists to avoid.
MAX_SECONDS = 7 * 24 * 3600
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION_RE = re.compile(r"(\d+)([smhd])")


class GrantError(StoreError):
    """A grant cannot be made or found; the message is for a person."""


@dataclass(frozen=True)
class Pattern:
    key: str
    glob: str

    def __str__(self) -> str:
        return f"{self.key}={self.glob}"


@dataclass(frozen=True)
class Grant:
    id: int
    tool: str
    version: str
    source_sha256: str
    patterns: tuple[Pattern, ...]
    created_at: str
    created_by: str
    expires_at: str
    revoked_at: str | None = None
    revoked_by: str | None = None
    uses: int = 0
    last_used_at: str | None = None

    def state(self, now: str) -> str:
        """active, expired or revoked (revoked wins: it is what a person did)."""
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.expires_at > now else "expired"

    def to_json(self, now: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "version": self.version,
            "source_sha256": self.source_sha256,
            "patterns": [{"key": p.key, "glob": p.glob} for p in self.patterns],
            "created_at": self.created_at,
            "created_by": self.created_by,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
            "revoked_by": self.revoked_by,
            "uses": self.uses,
            "last_used_at": self.last_used_at,
            "state": self.state(now),
        }


# -- parsing ----------------------------------------------------------------------------------


def parse_duration(text: str) -> float:
    """`30m`, `2h`, `1d`, `90s`, or a sum like `1h30m` -> seconds. ValueError says why not."""
    compact = text.strip().lower()
    if not compact or _DURATION_RE.sub("", compact):
        raise ValueError(
            f"{text!r} is not a duration; use a number and a unit: 30m, 2h, 1d (s, m, h, d)"
        )
    seconds = sum(int(n) * _UNITS[u] for n, u in _DURATION_RE.findall(compact))
    if seconds <= 0:
        raise ValueError("the duration must be longer than 0")
    if seconds > MAX_SECONDS:
        raise ValueError("a grant lasts at most 7d; make a new one when it ends")
    return float(seconds)


def parse_pattern(text: str) -> Pattern:
    """`KEY=GLOB` (the first `=` splits, so the glob may hold `=`)."""
    key, sep, glob = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--where {text!r}: expected KEY=GLOB, like path=/tmp/*")
    return Pattern(key.strip(), glob)


# -- the rule ---------------------------------------------------------------------------------


def arg_text(value: Any) -> str:
    """The text a glob is matched against: a string itself, anything else its canonical JSON."""
    return value if isinstance(value, str) else canonical_json(value)


def literal_glob(text: str) -> str:
    """A glob matching exactly `text`: each metacharacter (`*`, `?`, `[`, `]`) in brackets.
    The TUI starts a grant from a call's exact values, so it is as narrow as it can be."""
    return "".join(f"[{c}]" if c in "*?[]" else c for c in text)


def patterns_match(patterns: tuple[Pattern, ...] | list[Pattern], args: dict[str, Any]) -> bool:
    for p in patterns:
        if p.key not in args:
            return False
        if not fnmatch.fnmatchcase(arg_text(args[p.key]), p.glob):
            return False
    return True


def matches(
    grant: Grant, kind: str, tool: str, source_sha256: str, args: dict[str, Any], now: str
) -> bool:
    return (
        kind == "human_confirm"
        and grant.state(now) == "active"
        and grant.tool == tool
        and grant.source_sha256 == source_sha256
        and patterns_match(grant.patterns, args)
    )


# -- the table --------------------------------------------------------------------------------

_COLUMNS = (
    "id, tool, version, source_sha256, patterns_json, created_at, created_by, expires_at, "
    "revoked_at, revoked_by, uses, last_used_at"
)


def _row(row: tuple[Any, ...]) -> Grant:
    patterns = tuple(Pattern(k, g) for k, g in json.loads(row[4]))
    return Grant(
        id=row[0],
        tool=row[1],
        version=row[2],
        source_sha256=row[3],
        patterns=patterns,
        created_at=row[5],
        created_by=row[6],
        expires_at=row[7],
        revoked_at=row[8],
        revoked_by=row[9],
        uses=row[10],
        last_used_at=row[11],
    )


def create(
    store: Store,
    tool: str,
    version: str,
    source_sha256: str,
    patterns: list[Pattern],
    seconds: float,
) -> Grant:
    now = store._now()
    created, expires = now_iso(now), now_iso(now + seconds)
    with store._write() as conn:
        cur = conn.execute(
            "INSERT INTO grants (tool, version, source_sha256, patterns_json, created_at, "
            "created_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                tool,
                version,
                source_sha256,
                json.dumps([[p.key, p.glob] for p in patterns], ensure_ascii=False),
                created,
                store.actor,
                expires,
            ),
        )
        grant_id = int(cur.lastrowid or 0)
    found = get(store, grant_id)
    assert found is not None
    return found


def get(store: Store, grant_id: int) -> Grant | None:
    rows = store._read(f"SELECT {_COLUMNS} FROM grants WHERE id = ?", (grant_id,))
    return _row(rows[0]) if rows else None


def list_grants(store: Store, *, ended: bool = False) -> list[Grant]:
    """Active grants, newest first; `ended=True` adds the expired and revoked ones."""
    sql = f"SELECT {_COLUMNS} FROM grants"
    params: tuple[Any, ...] = ()
    if not ended:
        sql += " WHERE revoked_at IS NULL AND expires_at > ?"
        params = (now_iso(store._now()),)
    return [_row(r) for r in store._read(sql + " ORDER BY id DESC", params)]


def revoke(store: Store, grant_id: int) -> Grant:
    """Ends a grant now. Revoking a revoked or expired grant is refused with why."""
    at = now_iso(store._now())
    with store._write() as conn:
        cur = conn.execute(
            "UPDATE grants SET revoked_at = ?, revoked_by = ? "
            "WHERE id = ? AND revoked_at IS NULL AND expires_at > ?",
            (at, store.actor, grant_id, at),
        )
        changed = cur.rowcount
    grant = get(store, grant_id)
    if grant is None:
        raise GrantError(f"no grant {grant_id} (see `patch-tui inbox grants`)")
    if changed != 1:
        if grant.revoked_at is not None:
            raise GrantError(
                f"grant {grant_id} was already revoked by {grant.revoked_by} at {grant.revoked_at}"
            )
        raise GrantError(f"grant {grant_id} already expired at {grant.expires_at}")
    return grant


def apply(store: Store, action: Action) -> Decision | None:
    """Approve a pending action by the oldest standing grant that matches it; None when none does.

    The grant is re-checked inside the approval's transaction, so a grant revoked (or a tool
    re-granted) between the lookup and the approval does not approve."""
    now = now_iso(store._now())
    if action.kind != "human_confirm" or action.status != "pending":
        return None
    rows = store._read(
        f"SELECT {_COLUMNS} FROM grants WHERE tool = ? AND source_sha256 = ? "
        "AND revoked_at IS NULL AND expires_at > ? ORDER BY id",
        (action.tool, action.source_sha256, now),
    )
    for grant in (_row(r) for r in rows):
        if not matches(grant, action.kind, action.tool, action.source_sha256, action.args, now):
            continue

        def check(
            conn: sqlite3.Connection, at: str, grant: Grant = grant
        ) -> tuple[str, int] | None:
            cur = conn.execute(
                "UPDATE grants SET uses = uses + 1, last_used_at = ? WHERE id = ? "
                "AND revoked_at IS NULL AND expires_at > ? AND tool = ? AND source_sha256 = ?",
                (at, grant.id, at, action.tool, action.source_sha256),
            )
            if cur.rowcount != 1:
                return None
            return f"grant {grant.id} ({grant.created_by})", grant.id

        decision = store.approve(
            action.token, note=f"standing grant {grant.id}: {describe_patterns(grant)}", grant=check
        )
        if decision.ok:
            return decision
        if decision.code != "grant_inapplicable":
            return None  # decided meanwhile by a person, or expired: nothing for a grant to do
    return None


def describe_patterns(grant: Grant) -> str:
    return " ".join(str(p) for p in grant.patterns) or "(every call)"


# -- what a person is shown -------------------------------------------------------------------

# Why a grant the store still holds can no longer approve: its tool file is not the granted one.
TOOL_ENDED = {
    "tool_changed": "the tool changed since it was granted",
    "tool_gone": "the tool file is gone",
}
# How many of the paths its calls came from are looked at (newest first): a tool seldom moves.
_CALL_PATHS = 5


@dataclass(frozen=True)
class Listed:
    """A grant as listed: its state counts the tool file, which the store's state does not."""

    grant: Grant
    # active, expired, revoked (the store's), or tool_changed, tool_gone (the file's).
    state: str
    # The tool file compared with the grant; None when no file was found to compare.
    tool_file: str | None = None

    @property
    def ended(self) -> str | None:
        """None while the grant can approve; else why not (the state)."""
        return None if self.state == "active" else self.state

    @property
    def status(self) -> str:
        """One line: active, expired, revoked, or `ended: <why>` for a changed or gone tool."""
        why = TOOL_ENDED.get(self.state)
        return f"ended: {why}" if why else self.state

    @property
    def unchecked(self) -> bool:
        """Standing, but no tool file was found to compare it with (see the module)."""
        return self.state == "active" and self.tool_file is None

    @property
    def revocable(self) -> bool:
        """Standing in the store: an active grant, or one its tool ended (which the granted bytes
        put back would revive)."""
        return self.state in ("active", *TOOL_ENDED)

    def to_json(self, now: str) -> dict[str, Any]:
        return {
            **self.grant.to_json(now),
            "state": self.state,
            "ended": self.ended,
            "tool_file": self.tool_file,
        }


def _sha256_of(path: Path) -> str | None:
    """The file's sha256 as grants bind it (toolfile's), or None when there is no such file."""
    from patch_tui.format import toolfile

    try:
        if not path.is_file():
            return None
        return toolfile.read(str(path)).sha256
    except (OSError, ValueError):
        return None


def _candidates(store: Store, grant: Grant, toolbox: Toolbox | None) -> list[Path]:
    rows = store._read(
        "SELECT tool_path FROM actions WHERE tool = ? AND source_sha256 = ? "
        "AND tool_path IS NOT NULL GROUP BY tool_path ORDER BY MAX(id) DESC LIMIT ?",
        (grant.tool, grant.source_sha256, _CALL_PATHS),
    )
    paths = [Path(r[0]) for r in rows]
    if toolbox is not None:
        from patch_tui.runtime.toolbox import ToolboxError

        try:
            found = toolbox.find(grant.tool)
        except (ToolboxError, OSError):
            found = None
        if found is not None and found not in paths:
            paths.append(found)
    return paths


def tool_state(store: Store, grant: Grant, toolbox: Toolbox | None) -> Listed:
    """`grant` listed against its tool file (see the module): active while a file it names holds
    the granted bytes, or (unchecked) while no file can be found at all."""
    now = now_iso(store._now())
    state = grant.state(now)
    if state != "active":
        return Listed(grant, state)  # revoked or expired says more than the file can
    paths = _candidates(store, grant, toolbox)
    seen: Path | None = None
    for path in paths:
        sha = _sha256_of(path)
        if sha == grant.source_sha256:
            return Listed(grant, "active", str(path))
        if sha is not None and seen is None:
            seen = path
    if not paths:
        return Listed(grant, "active")
    if seen is not None:
        return Listed(grant, "tool_changed", str(seen))
    return Listed(grant, "tool_gone", str(paths[0]))


def listing(store: Store, toolbox: Toolbox | None, *, ended: bool = False) -> list[Listed]:
    """`list_grants`, each with its state counting the tool file. Without `ended`: the grants
    standing in the store, those whose tool ended included (shown ended, never hidden)."""
    return [tool_state(store, g, toolbox) for g in list_grants(store, ended=ended)]
