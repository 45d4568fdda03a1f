"""Red team (issue 28): `inbox list --json` (format/json_text.write_ascii_json_lines, orjson with
json where orjson refuses) against a store another program wrote with raw SQL, SQLite and a
real PostgreSQL: every row on a line of its own, ASCII only, and parsed back exactly what the
store holds (ints past 64 bits, floats at their edges, line and paragraph separators, bidi
controls, escape sequences, NUL, deep nesting, long strings, keys that look alike once escaped);
a row the store cannot read strictly (NaN, infinity, 1e400, a lone surrogate, broken text) is
one damaged row that can only be rejected, and the rest are listed."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals.schema import MAX_DEPTH
from patch_tui.approvals.values import args_sha256
from tests.runtimekit import cli, hold_mark, mark_box


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


# Args as another program stores them (JSON text), all readable: each must come back exactly.
GOOD: dict[str, str] = {
    "ints": '{"big":'
    + str(2**200)
    + ',"neg":'
    + str(-(2**64))
    + ',"u64":'
    + str(2**64 - 1)
    + ',"i64":'
    + str(-(2**63))
    + ',"zero":0}',
    "floats": '{"f":[5e-324,2.2250738585072014e-308,-0.0,0.0,1e16,1E16,1e-7,'
    "1.7976931348623157e308,0.1,1e22,123456789.123456789,-1.5e-300,1e-400]}",
    "controls": '{"s":"\\u2028\\u2029\\u202e\\u2066\\u001b[31m\\u0000\\u007f\\u0085\\ufeff'
    '\\u200b\\r\\n\\t end"}',
    "raw_unicode": '{"s":"\u2028\u2029\u202e caf\u00e9 \U0001f600 \u0085"}',
    "pair": '{"emoji":"\\ud83d\\ude00","E":"\\uD83D\\uDE00"}',
    "keys": '{"\\u00e9":1,"\\\\u00e9":2,"\u00e9 ":3,"":null,"a\\"b":true,"k\\\\":false}',
    "deep": json.dumps({"d": _nested(MAX_DEPTH - 1)}),  # as deep as a stored value may be
    "long": json.dumps({"s": "\u202e\x1b" + "x" * 60_000}),
    "dupes": '{"a":1,"a":2}',
    "spaced": ' \n{"a" : [ 1 , 2 ] }\t',
}

# Stored text the store must not read as args: (text, what the damaged reason says).
DAMAGED: dict[str, tuple[str, str]] = {
    "nan": ('{"x":NaN}', "NaN is not JSON"),
    "infinity": ('{"x":-Infinity}', "-Infinity is not JSON"),
    "too_large": ('{"x":1e400}', "too large a number"),
    "lone_surrogate": ('{"x":"\\ud800"}', "lone surrogate"),
    "low_surrogate_first": ('{"x":"\\udc00\\ud800"}', "lone surrogate"),
    "not_an_object": ("[1,2]", "not a JSON object"),
    "cut_short": ('{"x":1', "not valid JSON"),
    "not_utf8": ("{}", "not UTF-8"),  # made so below, where the store is SQLite
    # Read here, it failed to print in `inbox list` (a traceback): approvable, never shown.
    "too_deep_to_show": (json.dumps({"d": _nested(MAX_DEPTH)}), "nested deeper than"),
    "near_the_limit": ('{"d":' + "[" * 975 + "]" * 975 + "}", "nested deeper than"),
    "too_deep": ('{"d":' + "[" * 5000 + "]" * 5000 + "}", "recursion"),
    "trailing": ('{"x":1} {"y":2}', "not valid JSON"),
}


NOT_UTF8 = "planted-not_utf8".ljust(32, "-")


def _stored_sha(text: str) -> str:
    """The sha256 the store would keep beside these args (of their canonical JSON)."""
    try:
        return args_sha256(json.loads(text))
    except (ValueError, RecursionError):
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _exact(value: Any) -> str:
    """A value's text that tells 1 from 1.0 from True, and -0.0 from 0.0, keeping key order."""
    return json.dumps(value, ensure_ascii=True)


def _plant(execute: Callable[[str, tuple[Any, ...]], None], model: str, marker: str) -> dict:
    """Copies of the held action `model`, each with other args text: {token: name}."""
    columns = (
        "kind, tool, version, source_sha256, tool_path, reason, details_json, status, "
        "created_at, expires_at"
    )
    planted = {}
    for name, text in {**GOOD, **{k: t for k, (t, _) in DAMAGED.items()}}.items():
        token = f"planted-{name}".ljust(32, "-")
        execute(
            f"INSERT INTO actions (token, args_json, args_sha256, {columns}) "
            f"SELECT {marker}, {marker}, {marker}, {columns} FROM actions WHERE token = {marker}",
            (token, text, _stored_sha(text), model),
        )
        planted[token] = name
    return planted


def _check_listing(box: dict[str, Any], planted: dict[str, str], model: str) -> None:
    listed = cli(box["env"], "inbox", "list", "--all", "--json")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    out = listed.stdout
    assert out.isascii() and all(" " <= ch <= "~" for ch in out.replace("\n", ""))
    lines = out.split("\n")
    assert lines[0] == "[" and lines[-2:] == ["]", ""], lines[:1] + lines[-2:]
    body = lines[1:-2]
    assert all(line.endswith(",") for line in body[:-1]) and not body[-1].endswith(",")
    one_by_one = [json.loads(line.removesuffix(",")) for line in body]
    rows = {row["token"]: row for row in json.loads(out)}
    assert [row["token"] for row in one_by_one] == list(rows)  # a row per line, in order
    assert set(rows) == {model, *planted}
    for token, name in planted.items():
        row = rows[token]
        if name in GOOD:
            assert _exact(row["args"]) == _exact(json.loads(GOOD[name])), name
            assert "damaged" not in row and row["not_approvable"] is None, (name, row)
        else:
            assert row["args"] is None and DAMAGED[name][1] in row["damaged"], (name, row)
            assert row["not_approvable"]["code"] == "damaged", name
    assert rows[model]["not_approvable"] is None
    shown = cli(box["env"], "inbox", "list", "--all")  # and for a person, every row
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    assert all(token in shown.stdout for token in planted)


@pytest.mark.slow
def test_a_listing_of_a_sqlite_store_another_program_wrote(tmp_path: Path) -> None:
    box = mark_box(tmp_path)
    model = hold_mark(box, "model")
    with sqlite3.connect(box["store"]) as db:
        planted = _plant(lambda sql, params: db.execute(sql, params), model, "?")
        # Not UTF-8 at all ({"a":"\xff"}): one damaged row, never a listing that fails whole.
        db.execute(
            "UPDATE actions SET args_json = CAST(x'7b2261223a22ff227d' AS TEXT) WHERE token = ?",
            (NOT_UTF8,),
        )
    _check_listing(box, planted, model)
    # A row no one can approve can always be rejected.
    rejected = cli(box["env"], "inbox", "reject", NOT_UTF8)
    assert rejected.returncode == 0 and "Traceback" not in rejected.stderr, rejected.stderr


@pytest.mark.slow
def test_a_listing_of_a_team_database_another_program_wrote(tmp_path: Path, pg_url: str) -> None:
    import psycopg

    box = mark_box(tmp_path)
    box["env"]["PATCH_TUI_STORE"] = pg_url
    model = hold_mark(box, "model")
    with psycopg.connect(pg_url, autocommit=True) as db:
        planted = _plant(lambda sql, params: db.execute(sql, params), model, "%s")
    del planted[NOT_UTF8]  # PostgreSQL's text is always UTF-8
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("DELETE FROM actions WHERE token = %s", (NOT_UTF8,))
    _check_listing(box, planted, model)


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage",
    [
        "status = 'bogus'",
        "kind = 'nope'",
        "created_at = NULL, expires_at = NULL",
        "args_sha256 = NULL, tool = NULL",
        "claim_pid_start = 'x', decided_at = '\x1b[31mnot a time'",
    ],
)
def test_a_team_database_row_broken_past_its_constraints_is_one_damaged_row(
    tmp_path: Path, pg_url: str, damage: str
) -> None:
    """The superuser drops the table's checks and writes what the schema forbids: the listing
    still lists every row, says which one is broken, and never shows a traceback."""
    import psycopg

    box = mark_box(tmp_path)
    box["env"]["PATCH_TUI_STORE"] = pg_url
    fine = hold_mark(box, "fine")
    broken = hold_mark(box, "broken")
    with psycopg.connect(pg_url, autocommit=True) as db:
        for (name,) in db.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'actions'::regclass "
            "AND contype = 'c'"
        ).fetchall():
            db.execute(f'ALTER TABLE actions DROP CONSTRAINT "{name}"')
        for column in ("kind", "tool", "args_sha256", "created_at", "expires_at"):
            db.execute(f"ALTER TABLE actions ALTER COLUMN {column} DROP NOT NULL")
        db.execute(f"UPDATE actions SET {damage} WHERE token = %s", (broken,))
    listed = cli(box["env"], "inbox", "list", "--all", "--json")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    rows = {row["token"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {fine, broken} and rows[fine]["not_approvable"] is None
    for argv in (("inbox", "list", "--all"), ("inbox", "show", broken)):
        shown = cli(box["env"], *argv)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, shown.stderr
        assert "\x1b" not in shown.stdout and broken in shown.stdout
