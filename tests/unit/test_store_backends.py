"""The store's contract, written once and run against every backend (SQLite and PostgreSQL,
tests/storekit.py): the same actions, states, events and guarantees on both, and of any number
of concurrent deciders or confirmers exactly one wins."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from storekit import SHA, pending

from patch_tui.approvals.backend import ApprovalStore
from patch_tui.approvals.open_store import open_store
from patch_tui.approvals.records import Signature
from patch_tui.approvals.values import StoreError, args_sha256, now_iso

FAR = "2999-01-01T00:00:00.000Z"


def signed(store: Any) -> None:
    """Skip where a backend does not have the signed-decision API yet (the SQLite Store gains
    it with the signing branch; until then it keeps its HMAC-sealed approve/claim)."""
    if not hasattr(store, "add_decision"):
        pytest.skip(f"{type(store).__name__} has no add_decision yet (signed approvals)")


def sig(approver: str, decision: str = "approve", note: str | None = None) -> Signature:
    return Signature(approver, decision, now_iso(), f'{{"by":"{approver}"}}', note)  # type: ignore[arg-type]


def quorum(n: int) -> Callable[[Any, Any], str | None]:
    """A quorum callback: complete (with a far expiry) once n distinct approvers signed."""

    def complete(action: Any, signatures: Any) -> str | None:
        approvers = {s.approver for s in signatures if s.decision == "approve"}
        return FAR if len(approvers) >= n else None

    return complete


def always_good(*_: Any) -> None:
    return None


def test_a_held_call_is_kept_exactly(any_store: Any) -> None:
    args = {"z": 1, "a": [1.5, None, "é"], "m": {"y": True, "b": "x"}}
    action = pending(any_store, args=args, details={"source_tools": ["fetch"]}, tool_path="/t/x.py")
    got = any_store.get(action.token)
    assert got == action
    assert got.args == args and list(got.args) == ["z", "a", "m"]  # key order kept
    assert got.args_sha256 == args_sha256(args)
    assert got.status == "pending" and got.details == {"source_tools": ["fetch"]}
    assert got.created_at.endswith("Z") and got.expires_at > got.created_at
    assert any_store.get("nope") is None
    with pytest.raises(ValueError):
        pending(any_store, args={"x": float("nan")})
    with pytest.raises(ValueError):
        pending(any_store, kind="whatever")


def test_listing_counting_and_events(any_store: Any) -> None:
    first = pending(any_store, tool="a")
    second = pending(any_store, tool="b")
    assert [a.token for a in any_store.list_actions()] == [second.token, first.token]
    assert [a.token for a in any_store.list_actions(tool="a")] == [first.token]
    assert [a.token for a in any_store.list_actions(limit=1)] == [second.token]
    assert any_store.list_actions(statuses=("executed",)) == []
    assert any_store.pending_count() == 2
    assert any_store.next_expiry() == min(first.expires_at, second.expires_at)
    with pytest.raises(ValueError):
        any_store.list_actions(statuses=("nonsense",))
    events = any_store.events(first.token)
    assert [e.event for e in events] == ["created"]
    assert events[0].actor == "alice@test" and events[0].detail["tool"] == "a"
    assert [e.event for e in any_store.events(limit=1)] == ["created"]


def test_a_count_says_how_many_a_listing_lists(any_store: Any) -> None:
    """The inbox shows the newest page first and says how many there are (count_actions):
    the count is the listing's, status by status, on every backend."""
    signed(any_store)
    held = [pending(any_store, args={"n": n}) for n in range(5)]
    any_store.add_decision(held[0].token, sig("carol", "reject", "no"), complete=quorum(1))
    any_store.add_decision(held[1].token, sig("carol"), complete=quorum(1))
    for statuses in [("pending",), ("rejected",), ("approved", "rejected"), ("executed",), None]:
        listed = any_store.list_actions(statuses=statuses)
        assert any_store.count_actions(statuses) == len(listed), statuses
    assert any_store.count_actions() == 3  # pending by default, as list_actions lists
    assert len(any_store.list_actions(limit=2)) == 2 < any_store.count_actions()
    with pytest.raises(ValueError):
        any_store.count_actions(("nonsense",))


def test_the_version_moves_when_another_process_commits(store_location: Any) -> None:
    with (
        open_store(store_location, actor="a@x") as one,
        open_store(store_location, actor="b@y") as two,
    ):
        before = one.data_version()
        assert one.data_version() == before  # reading moves nothing
        pending(two)
        assert one.data_version() != before


def test_an_undecided_action_expires_and_never_runs(any_store: Any) -> None:
    action = pending(any_store, ttl=0)
    assert any_store.pending_count() == 0
    assert any_store.settle() == 1
    assert any_store.get(action.token).status == "expired"
    assert [e.event for e in any_store.events(action.token)] == ["created", "expired"]
    assert any_store.settle() == 0  # settled once
    if hasattr(any_store, "add_decision"):
        late = any_store.add_decision(action.token, sig("bob"), complete=quorum(1))
        assert not late.ok and late.code == "expired"
        assert any_store.claim(action.token, always_good).code == "expired"


def test_a_decision_reads_alike_on_every_backend(any_store: Any) -> None:
    """One home for the transitions (approvals/decision_rows.py): a decision's event is by the
    process that recorded it, the approver in its detail and in decided_by, on both backends;
    a decision on an approval whose expiry passed says expired and marks it so."""
    action = pending(any_store)
    made = any_store.add_decision(action.token, sig("bob"), complete=lambda *_: now_iso())
    assert made.ok and made.action.decided_by == "bob via alice@test"
    approved = [e for e in any_store.events(action.token) if e.event == "approved"]
    assert len(approved) == 1 and approved[0].actor == "alice@test"
    assert approved[0].detail["approver"] == "bob"
    time.sleep(0.01)  # the approval's expiry (now, as complete said) has passed
    late = any_store.add_decision(action.token, sig("carol"), complete=quorum(1))
    assert not late.ok and late.code == "expired" and late.action.status == "expired"
    assert [e.event for e in any_store.events(action.token)][-1] == "expired"


def test_placeholder_characters_in_values_are_kept_exactly(any_store: Any) -> None:
    """The shared statements are written with `?` and PostgreSQL's connection turns them into
    psycopg's `%s`: values holding `?`, `%s` or `%` are parameters and come back as they went."""
    odd = "? %s %% %(x)s ?"
    action = pending(any_store, tool=f"t{odd}", args={odd: odd}, reason=odd, tool_path=odd)
    got = any_store.get(action.token)
    assert (got.tool, got.args, got.reason, got.tool_path) == (f"t{odd}", {odd: odd}, odd, odd)
    assert [a.token for a in any_store.list_actions(tool=f"t{odd}")] == [action.token]
    made = any_store.add_decision(action.token, sig(odd, "reject", odd), complete=quorum(1))
    assert made.ok and made.action.note == odd and made.action.decided_by.startswith(odd)
    assert any_store.decisions(action.token)[0].approver == odd
    any_store.record_output(odd, odd)
    assert any_store.recent_outputs()[0] == (odd, odd)


def test_the_taint_memory_is_shared(store_location: Any) -> None:
    with (
        open_store(store_location, actor="a@x") as one,
        open_store(store_location, actor="b@y") as two,
    ):
        for i in range(25):
            one.record_output("fetch", f"out {i}")
        seen = two.recent_outputs()
        assert len(seen) == 20 and seen[0] == ("fetch", "out 24")


# -- signed decisions (approvals/backend.py) ----------------------------------------------------


def test_both_backends_satisfy_the_interface(any_store: Any) -> None:
    signed(any_store)
    assert isinstance(any_store, ApprovalStore)


def test_a_quorum_of_two_distinct_approvers(any_store: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    first = any_store.add_decision(action.token, sig("alice"), complete=quorum(2))
    assert not first.ok and first.code == "awaiting_approval"  # "1 of 2": recorded, pending
    assert first.action.status == "pending"
    again = any_store.add_decision(action.token, sig("alice"), complete=quorum(2))
    assert not again.ok and again.code == "awaiting_approval"  # the same person counts once
    assert any_store.get(action.token).status == "pending"
    second = any_store.add_decision(action.token, sig("bob", note="ok"), complete=quorum(2))
    assert second.ok and second.action.status == "approved"
    assert second.action.expires_at == FAR
    assert second.action.decided_by == "bob via alice@test"  # the key that completed it
    events = [e.event for e in any_store.events(action.token)]
    assert events == ["created", "signed", "signed", "approved"]
    assert [s.approver for s in any_store.decisions(action.token)] == ["alice", "alice", "bob"]


def test_a_reject_ends_the_action_with_its_reason(any_store: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    done = any_store.add_decision(
        action.token, sig("carol", "reject", "not today"), complete=quorum(2)
    )
    assert done.ok and done.action.status == "rejected" and done.action.note == "not today"
    late = any_store.add_decision(action.token, sig("dave"), complete=quorum(1))
    assert not late.ok and late.code == "rejected"
    assert any_store.claim(action.token, always_good).code == "rejected"


def test_an_action_changed_since_shown_is_not_approved(any_store: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    stale = any_store.add_decision(
        action.token, sig("alice"), complete=quorum(1), shown_args_sha256="0" * 64
    )
    assert not stale.ok and stale.code == "changed_since_shown"
    assert any_store.get(action.token).status == "pending" and not any_store.decisions(action.token)


def test_an_edit_replaces_the_args_that_run_and_keeps_the_proposal(any_store: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    edited = {"to": "bob@example.com", "body": "hello"}
    first = any_store.add_decision(action.token, sig("alice"), complete=quorum(2))
    assert first.code == "awaiting_approval"
    # Bob edits: his signature is over the new args; Alice's (over the old) stops counting,
    # and she may sign the new args again.
    done = any_store.add_decision(action.token, sig("bob"), complete=quorum(1), args=edited)
    assert done.ok and done.action.args == edited
    assert done.action.args_sha256 == args_sha256(edited)
    assert done.action.proposed_args == action.args
    events = any_store.events(action.token)
    assert events[-1].detail["edited"] is True
    assert events[-1].detail["proposed_args_sha256"] == action.args_sha256


def test_claim_runs_once_and_only_with_a_good_approval(any_store: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    assert any_store.claim(action.token, always_good).code == "awaiting_approval"
    any_store.add_decision(action.token, sig("alice"), complete=quorum(1))
    refused = any_store.claim(action.token, lambda *_: ("tampered", "the signature is bad"))
    assert not refused.ok and refused.code == "tampered"
    assert refused.action.status == "failed" and refused.action.tampered
    assert refused.action.result["status"] == "tampered"
    assert any_store.claim(action.token, always_good).code == "already_used"

    good = pending(any_store)
    any_store.add_decision(good.token, sig("alice"), complete=quorum(1))
    seen: list[Any] = []

    def check(action: Any, signatures: Any, grant: Any) -> None:
        seen.append((action.status, [s.approver for s in signatures], grant))

    claimed = any_store.claim(good.token, check)
    assert claimed.ok and claimed.action.status == "executing"
    assert seen == [("approved", ["alice"], None)]
    assert any_store.claim(good.token, always_good).code == "already_used"
    done = any_store.finish(good.token, True, {"sent": 1}, ran={"run_id": "r1"})
    assert done.status == "executed" and done.result == {"sent": 1}
    assert [e.event for e in any_store.events(good.token)][-2:] == ["claimed", "executed"]


def _race(n: int, store_location: Any, act: Callable[[Any], Any]) -> list[Any]:
    """n threads, each with its own store (its own connection), acting at the same moment."""
    stores = [open_store(store_location, actor=f"p{i}@race") for i in range(n)]
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = act(stores[i])
        except Exception as exc:  # a store error is a loss, never a second win
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for s in stores:
        s.close()
    return results


def test_exactly_one_of_many_concurrent_deciders_wins(any_store: Any, store_location: Any) -> None:
    signed(any_store)
    action = pending(any_store)
    results = _race(
        12,
        store_location,
        lambda s: s.add_decision(
            action.token,
            sig(s.actor, "reject" if s.actor.startswith("p1") else "approve"),
            complete=quorum(1),
        ),
    )
    decided = [r for r in results if not isinstance(r, Exception) and r.ok]
    assert len(decided) == 1, results
    final = any_store.get(action.token)
    assert final.status in ("approved", "rejected")
    assert [e.event for e in any_store.events(action.token)].count(final.status) == 1


def test_exactly_one_of_many_concurrent_confirmers_runs(
    any_store: Any, store_location: Any
) -> None:
    signed(any_store)
    action = pending(any_store)
    assert any_store.add_decision(action.token, sig("alice"), complete=quorum(1)).ok
    results = _race(12, store_location, lambda s: s.claim(action.token, always_good))
    won = [r for r in results if not isinstance(r, Exception) and r.ok]
    assert len(won) == 1, results
    assert {r.code for r in results if r is not won[0] and not isinstance(r, Exception)} == {
        "already_used"
    }
    assert [e.event for e in any_store.events(action.token)].count("claimed") == 1


# -- who is reading which call (the team inbox's claim) -----------------------------------------


def test_a_claim_shows_who_reads_a_call_and_ends_by_itself(store_location: Any) -> None:
    import time

    with (
        open_store(store_location, actor="alice@laptop") as alice,
        open_store(store_location, actor="bob@laptop") as bob,
    ):
        action = pending(alice)
        assert alice.claim_reading(action.token, seconds=60).ok
        taken = bob.claim_reading(action.token)
        assert not taken.ok and taken.code == "being_read" and "alice@laptop" in taken.why
        assert bob.readings()[action.token].by == "alice@laptop"  # shown to everyone else
        assert alice.claim_reading(action.token, seconds=60).ok  # renewing one's own
        assert not bob.release_reading(action.token)  # only its holder releases it
        assert alice.release_reading(action.token)
        assert bob.claim_reading(action.token, seconds=60).ok
        # Walked away: a minute later it is nobody's.
        later = time.time() + 61
        alice._now = lambda: later  # type: ignore[method-assign]
        assert action.token not in alice.readings()
        assert alice.claim_reading(action.token).ok
        assert any(e.event == "reading" for e in bob.events(action.token))


def test_a_decided_call_cannot_be_claimed_and_lists_no_reader(any_store: Any) -> None:
    action = pending(any_store, ttl=0)
    any_store.settle()
    refused = any_store.claim_reading(action.token)
    assert not refused.ok and refused.code == "not_pending"
    assert any_store.claim_reading("nope").code == "unknown_token"
    assert any_store.readings() == {}


def test_exactly_one_of_many_concurrent_claimers_reads(any_store: Any, store_location: Any) -> None:
    action = pending(any_store)
    results = _race(8, store_location, lambda s: s.claim_reading(action.token))
    got = [r for r in results if not isinstance(r, Exception) and r.ok]
    assert len(got) == 1, results
    winner = results.index(got[0])
    assert any_store.readings()[action.token].by == f"p{winner}@race"


# -- standing grants ------------------------------------------------------------------------------


def _grant(store: Any, *, tool: str = "send_mail", hours: float = 1) -> Any:
    from patch_tui.approvals.records import Grant, Pattern
    from patch_tui.approvals.values import new_token

    now = time.time()
    made = Grant(
        id=0,
        tool=tool,
        version="1.0.0",
        source_sha256=SHA,
        patterns=(Pattern("to", "*@example.com"),),
        created_at=now_iso(now),
        created_by="alice",
        expires_at=now_iso(now + hours * 3600),
        grant_id=new_token(),
        tool_path="/t/send_mail.py",
        signatures=(sig("alice", "grant"),),
    )
    return store.add_grant(made)


def test_grants_are_rows_with_their_signatures(any_store: Any) -> None:
    signed(any_store)
    grant = _grant(any_store)
    assert grant.id > 0 and [s.approver for s in grant.signatures] == ["alice"]
    assert grant.patterns[0].glob == "*@example.com" and grant.tool_path == "/t/send_mail.py"
    assert any_store.get_grant(grant.id) == grant
    second = any_store.add_grant_signature(grant.id, sig("bob", "grant"))
    assert [s.approver for s in second.signatures] == ["alice", "bob"]
    with pytest.raises(StoreError, match="no grant"):
        any_store.add_grant_signature(grant.id + 999, sig("bob", "grant"))
    other = _grant(any_store, tool="slugify")
    assert [g.id for g in any_store.list_grants()] == [other.id, grant.id]
    assert [g.id for g in any_store.list_grants(tool="slugify")] == [other.id]
    revoked = any_store.revoke_grant(grant.id, sig("carol", "revoke"))
    assert revoked.revoked_by == "carol" and revoked.revocation is not None
    with pytest.raises(StoreError, match="already revoked"):
        any_store.revoke_grant(grant.id, sig("carol", "revoke"))
    assert [g.id for g in any_store.list_grants()] == [other.id]
    assert {g.id for g in any_store.list_grants(ended=True)} == {grant.id, other.id}


def test_a_grant_approves_only_when_its_check_holds_and_counts_the_use(any_store: Any) -> None:
    signed(any_store)
    grant = _grant(any_store)
    action = pending(any_store)
    no = any_store.approve_by_grant(action.token, grant.id, lambda a, g: False)
    assert not no.ok and no.code == "grant_inapplicable"
    seen: list[Any] = []
    yes = any_store.approve_by_grant(
        action.token, grant.id, lambda a, g: seen.append((a.token, g.id)) or True
    )
    assert yes.ok and yes.action.status == "approved" and yes.action.grant_id == grant.id
    assert seen == [(action.token, grant.id)]
    assert any_store.get_grant(grant.id).uses == 1
    checked: list[Any] = []
    claimed = any_store.claim(action.token, lambda a, s, g: checked.append(g) or None)
    assert claimed.ok and checked[0].id == grant.id  # the claim's check sees the grant
    late = any_store.approve_by_grant(action.token, grant.id, lambda a, g: True)
    assert not late.ok and late.code == "grant_inapplicable"


def test_many_actions_signatures_are_read_at_once_as_one_by_one(any_store: Any) -> None:
    held = [pending(any_store, args={"n": i}) for i in range(3)]
    any_store.add_decision(held[0].token, sig("alice"), complete=quorum(2))
    any_store.add_decision(held[0].token, sig("bob"), complete=quorum(3))
    any_store.add_decision(held[2].token, sig("carol", "reject"), complete=quorum(1))
    tokens = [a.token for a in held] + ["unknown"]
    many = any_store.decisions_many(tokens)
    assert many == {t: any_store.decisions(t) for t in tokens}
    assert [s.approver for s in many[held[0].token]] == ["alice", "bob"]
    assert many[held[1].token] == [] and any_store.decisions_many([]) == {}


def test_what_no_one_can_have_seen_is_never_approved_but_can_be_rejected(any_store: Any) -> None:
    from patch_tui.approvals.approvable import ARGS_DISPLAY_LIMIT

    action = pending(any_store, args={"body": "x" * (ARGS_DISPLAY_LIMIT + 10)})
    refused = any_store.add_decision(action.token, sig("alice"), complete=quorum(1))
    assert not refused.ok and refused.code == "args_too_long"
    assert any_store.decisions(action.token) == []  # nothing recorded
    grant = _grant(any_store)
    by_grant = any_store.approve_by_grant(action.token, grant.id, lambda a, g: True)
    assert not by_grant.ok and by_grant.code == "grant_inapplicable"
    assert any_store.add_decision(action.token, sig("alice", "reject"), complete=quorum(1)).ok
