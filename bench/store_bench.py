"""Confirmation store benchmarks (issue 3, item 7).

    .venv/bin/python bench/store_bench.py [--approvals 300] [--confirms 40] [--pending 10000]
    .venv/bin/python bench/store_bench.py --store postgresql://…|pgserver   (bench/team_store_bench.py)

Figures:
- approve-to-durable latency: wall time of `decisions.approve(Store, )`, which returns only after its
  BEGIN IMMEDIATE ... COMMIT with synchronous=FULL (fsync), i.e. once the decision survives a
  power cut; median and p99;
- confirm throughput: `Gate.confirm_action()` on approved actions of a trivial tool, end to end
  (claim, hash check, sandboxed run, finish), and the store part alone (claim + finish);
- signing and verifying (issue 23, item 9): an approval through the decisions service (build the
  statement, sign it, verify every signature for the quorum, record) against the store's part
  alone (the same row written with a ready-made signature and no verification), and a claim
  through the decisions service (verify every signature inside the claim) against the store's
  claim alone; the difference is what signatures add, in ms (target: at most 2 ms each);
- `patch-tui inbox list --json` wall time with 10,000 pending actions (a fresh process each time,
  as a person or a script would run it), and `Store.list_actions()` in process.

Everything happens in a temporary folder; nothing touches the user's store.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from patch_tui.approvals import decisions, ran_here  # noqa: E402
from patch_tui.approvals.gate import Gate  # noqa: E402
from patch_tui.approvals.store import Store  # noqa: E402

TOOL = """# ---
# name: bench_noop
# version: 1.0.0
# description: Does nothing, quickly.
# inputs:
#   - name: n
#     type: integer
#     description: A number.
# outputs:
#   type: object
# capabilities:
#   network: false
#   filesystem: none
#   human_confirm: true
# runtime:
#   language: python
#   python_version: "3.12"
#   packages: []
# ---
import json
import sys


def main(n: int) -> dict:
    return {"n": n}


if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
"""


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def bench_approve(tmp: Path, n: int) -> dict[str, float]:
    store = Store(tmp / "approve.sqlite3", actor="bench")
    tokens = [
        store.create_pending("human_confirm", "t", "1.0.0", "0" * 64, {"i": i}, "bench").token
        for i in range(n)
    ]
    times = []
    for token in tokens:
        t0 = time.perf_counter()
        assert decisions.approve(store, token).ok
        times.append(time.perf_counter() - t0)
    store.close()
    return {"n": n, "median_ms": ms(statistics.median(times)), "p99_ms": ms(pct(times, 99))}


def bench_confirm(tmp: Path, n: int) -> dict[str, float]:
    tools = tmp / "tools"
    tools.mkdir()
    path = tools / "bench_noop.py"
    path.write_text(TOOL)
    store = Store(tmp / "confirm.sqlite3", actor="bench")
    gate = Gate(store, timeout=30)
    tokens = []
    for i in range(n):
        outcome = gate.call(path, {"n": i})
        assert outcome.status == "confirmation_required"
        token = outcome.payload["confirmation_token"]
        assert decisions.approve(store, token).ok
        tokens.append(token)
    t0 = time.perf_counter()
    for token in tokens:
        assert gate.confirm_action(token).status == "ok"
    full = time.perf_counter() - t0
    # The store's share: claim + finish, without running anything.
    store_tokens = []
    for i in range(n * 5):
        a = store.create_pending("human_confirm", "t", "1.0.0", "0" * 64, {"i": i}, "bench")
        decisions.approve(store, a.token)
        store_tokens.append(a.token)
    t0 = time.perf_counter()
    for token in store_tokens:
        assert decisions.claim(store, token).ok
        store.finish(token, True, {"ok": True})
    store_only = time.perf_counter() - t0
    store.close()
    return {
        "n": n,
        "confirms_per_s": round(n / full, 1),
        "ms_per_confirm": ms(full / n),
        "store_claim_finish_per_s": round(len(store_tokens) / store_only, 1),
    }


def bench_signing(tmp: Path, n: int) -> dict[str, float]:
    """What signing and verifying add to an approval and to a confirm (see the module)."""
    from patch_tui.approvals.records import Signature

    store = Store(tmp / "signing.sqlite3", actor="bench")

    def held() -> list[str]:
        return [
            store.create_pending("human_confirm", "t", "1.0.0", "0" * 64, {"i": i}, "bench").token
            for i in range(n)
        ]

    signed, plain = held(), held()
    # Warm up: the key loaded, cryptography imported (once per process, not per approval).
    warm = held()[0]
    assert decisions.approve(store, warm).ok
    (ready,) = store.decisions(warm)
    # Interleaved, one signed and one store-only at a time, so both see the same disk and load.
    # Wall time includes each commit's fsync, which varies with the disk; CPU time (this
    # process's) is what signing and verifying cost by themselves.
    times_signed, times_plain, cpu_signed, cpu_plain = [], [], [], []
    for token, other in zip(signed, plain, strict=True):
        t0, c0 = time.perf_counter(), time.process_time()
        assert decisions.approve(store, token).ok
        times_signed.append(time.perf_counter() - t0)
        cpu_signed.append(time.process_time() - c0)
        row = Signature(ready.approver, "approve", ready.at, ready.envelope)
        t0, c0 = time.perf_counter(), time.process_time()
        done = store.add_decision(other, row, complete=lambda a, s: "9999-01-01T00:00:00.000Z")
        times_plain.append(time.perf_counter() - t0)
        cpu_plain.append(time.process_time() - c0)
        assert done.ok
    claim_signed, claim_plain, claim_cpu_signed, claim_cpu_plain = [], [], [], []
    memory: list[float] = []
    for token, other in zip(signed, plain, strict=True):
        t0, c0 = time.perf_counter(), time.process_time()
        assert decisions.claim(store, token).ok
        claim_signed.append(time.perf_counter() - t0)
        claim_cpu_signed.append(time.process_time() - c0)
        # The store's claim, and the runner's memory of it (approvals/ran_here.py), which every
        # claim through the decisions service records too: timed apart, and in the baseline.
        t0, c0 = time.perf_counter(), time.process_time()
        assert store.claim(other, lambda a, s, g: None).ok
        t1 = time.perf_counter()
        assert ran_here.record_claim(other) is None
        claim_plain.append(time.perf_counter() - t0)
        claim_cpu_plain.append(time.process_time() - c0)
        memory.append(time.perf_counter() - t1)
    store.close()
    approve_s, approve_p = statistics.median(times_signed), statistics.median(times_plain)
    claim_s, claim_p = statistics.median(claim_signed), statistics.median(claim_plain)
    return {
        "n": n,
        "approve_signed_ms": ms(approve_s),
        "approve_store_only_ms": ms(approve_p),
        "approve_added_ms": ms(approve_s - approve_p),
        "approve_ratio": round(approve_s / approve_p, 2),
        "claim_verified_ms": ms(claim_s),
        "claim_memory_ms": ms(statistics.median(memory)),
        "claim_store_only_ms": ms(claim_p),
        "claim_added_ms": ms(claim_s - claim_p),
        "claim_ratio": round(claim_s / claim_p, 2),
        # CPU: the mean, since process_time ticks coarsely on some systems.
        "approve_added_cpu_ms": ms(statistics.fmean(cpu_signed) - statistics.fmean(cpu_plain)),
        "claim_added_cpu_ms": ms(
            statistics.fmean(claim_cpu_signed) - statistics.fmean(claim_cpu_plain)
        ),
    }


def bench_list(tmp: Path, pending: int) -> dict[str, float]:
    db = tmp / "list.sqlite3"
    store = Store(db, actor="bench", ttl=3600)
    t0 = time.perf_counter()
    for i in range(pending):
        store.create_pending(
            "human_confirm",
            f"tool_{i % 50}",
            "1.0.0",
            "0" * 64,
            {"to": f"user{i}@example.com", "body": "x" * 200},
            "bench",
        )
    create_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    listed = store.list_actions()
    in_process = time.perf_counter() - t0
    assert len(listed) == pending
    store.close()
    env = dict(os.environ, PATCH_TUI_CONFIG=str(tmp / "config.toml"), PATCH_TUI_STORE=str(db))
    runs = []
    size = 0
    for _ in range(3):
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "patch_tui", "inbox", "list", "--json"],
            env=env,
            capture_output=True,
            check=True,
            cwd=ROOT,
        ).stdout
        runs.append(time.perf_counter() - t0)
        size = len(out)
    assert len(json.loads(out)) == pending
    return {
        "pending": pending,
        "create_per_s": round(pending / create_s, 1),
        "list_actions_ms": ms(in_process),
        "inbox_list_json_median_ms": ms(statistics.median(runs)),
        "inbox_list_json_bytes": size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--approvals", type=int, default=300)
    parser.add_argument("--confirms", type=int, default=40)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--signed", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp_name:
        tmp = Path(tmp_name)
        # The approver key is made in this folder, never in the user's config; the runs' records
        # and the runner's memory of its claims (approvals/ran_here.py) too, never the user's.
        os.environ["PATCH_TUI_CONFIG"] = str(tmp / "config.toml")
        os.environ["XDG_STATE_HOME"] = str(tmp / "state")
        os.environ.pop("PATCH_TUI_APPROVER_KEY", None)
        os.environ.pop("PATCH_TUI_APPROVERS_FILE", None)
        results = {
            "signing": bench_signing(tmp, args.signed),
            "approve_to_durable": bench_approve(tmp, args.approvals),
            "confirm": bench_confirm(tmp, args.confirms),
            "inbox_list": bench_list(tmp, args.pending),
        }
    a, c, li = results["approve_to_durable"], results["confirm"], results["inbox_list"]
    sg = results["signing"]
    print(
        f"signing ({sg['n']}): approve {sg['approve_signed_ms']} ms vs store alone "
        f"{sg['approve_store_only_ms']} ms (+{sg['approve_added_ms']} ms, x{sg['approve_ratio']}); "
        f"claim {sg['claim_verified_ms']} ms vs store and this machine's memory alone "
        f"{sg['claim_store_only_ms']} ms (of which the memory {sg['claim_memory_ms']} ms) "
        f"(+{sg['claim_added_ms']} ms, x{sg['claim_ratio']}); CPU added: approve "
        f"{sg['approve_added_cpu_ms']} ms, claim {sg['claim_added_cpu_ms']} ms"
    )
    print(f"approve-to-durable ({a['n']}): median {a['median_ms']} ms, p99 {a['p99_ms']} ms")
    print(
        f"confirm ({c['n']}, end to end with a sandboxed run): {c['confirms_per_s']}/s "
        f"({c['ms_per_confirm']} ms each); store claim+finish alone: {c['store_claim_finish_per_s']}/s"
    )
    print(
        f"inbox list --json with {li['pending']} pending: {li['inbox_list_json_median_ms']} ms "
        f"(fresh process, median of 3; {li['inbox_list_json_bytes']} bytes); "
        f"list_actions in process {li['list_actions_ms']} ms; creating them: {li['create_per_s']}/s"
    )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    if any(a == "--store" or a.startswith("--store=") for a in sys.argv[1:]):
        # A database store: the team inbox's figures, PostgreSQL beside SQLite (team_store_bench).
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from team_store_bench import main as team_main

        raise SystemExit(team_main(sys.argv[1:]))
    raise SystemExit(main())
