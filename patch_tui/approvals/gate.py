"""The gates between a tool call and a run: human_confirm, tainted input, and confirm_action.

    gate = Gate(store, toolbox=None, timeout=60, allow_install=True)
    gate.call(path, args)          -> Outcome   run it, or hold it as a pending action
    gate.confirm_action(token)     -> Outcome   run a held call once a person approved it
    find_tool(ref, toolbox)        -> Path      a file path, or a tool name in the toolbox

`Outcome.status` is "ok" (ran; `payload` is the tool's result), "failed" (ran or could not run;
`payload` = {"error": ...}), "invalid" (bad call: unknown input, missing one), or a held/refused
answer whose `payload` is the JSON object to hand back: "confirmation_required",
"awaiting_approval", "rejected" (with the reason), "expired", "tool_changed", "args_changed",
"tampered" (marked approved without a genuine signed decision), "not_allowed" (signed by an
approver the approvers file does not allow for it), "unknown_token", "already_used"
(the action was already run, is running, or was interrupted).

The gates, as the Patch runtime has them, with one fix: they are separate. A call is checked for
tainted input first: a string of 16+ characters (anywhere in an input's value) equal to, inside or
containing a string one of the last 20 tool outputs returned (at any depth, exactly as returned) of the last 30 minutes (kept in the store, so every process shares them),
flowing into an input without `tainted_ok`, holds the call as a `tainted_input` action naming the
source tools and the inputs. A `human_confirm` tool's call is held as a `human_confirm` action.
When a person approves a taint confirmation for a human_confirm tool, confirming it does not run
the tool: it opens the human_confirm action (a new token) that a person must approve in turn.
(The Patch runtime skipped every check on confirm, so one approval let both gates through.)

confirm_action runs a call only when its action is approved and unexpired, its approval is a
person's signature (enough distinct approvers' signatures, or a signed grant's) over this very
call, verified against the trusted approvers inside the claim (approvals/decisions.py:
`tampered`, `args_changed`, `not_allowed`, `awaiting_approval`), and the tool file's sha256 is still the approved one
(`tool_changed`); the claim is atomic, so of many concurrent confirms exactly one runs it. The
file is read once: the bytes hashed are the bytes that run (`runner.run_bytes`, handed to Python
through a sealed memfd, not a file another run could rewrite), and the `executed`/`failed` event
records the run id and the sha256 of the source and args that ran. Every refusal leaves the action
in a final state with the refusal as its result: nothing stays `executing`.

A human_confirm hold that a standing grant matches (approvals/grants.py; never a tainted_input hold) is
approved by that grant at once and confirmed in the same call. An action whose args a person edited
before approving (approvals/edits.py) runs the approved args, and its answer says so: an ok result comes
back as {"result": ..., "args_changed": {...}}, a failure carries "args_changed" beside "error".
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from patch_tui.approvals import workspace
from patch_tui.approvals.store import Action, Store, args_sha256
from patch_tui.approvals.taint_origins import origin_words, recent_outputs_at, taint_origins
from patch_tui.approvals.taint_values import _returned_strings, _strings
from patch_tui.format import toolfile
from patch_tui.format.fields import JSON_PY_TYPES, fits_json_type, json_type
from patch_tui.format.plain_manifest import RunManifest
from patch_tui.runtime import sandbox
from patch_tui.runtime.runner import DEFAULT_TIMEOUT, Isolation, RunResult, run_bytes, run_source
from patch_tui.runtime.toolbox import Toolbox, ToolboxError

MIN_TAINT_LENGTH = 16
HUMAN_CONFIRM_REASON = "Tool is marked capabilities.human_confirm: true (irreversible action)."
# Statuses whose payload is an answer for the caller, not a failure of the call.
HELD = ("confirmation_required", "awaiting_approval")


class GateError(Exception):
    """The tool cannot be found or read; the message is for a person."""


@dataclass
class Outcome:
    status: str
    payload: Any
    run: RunResult | None = None
    action: Action | None = None

    @property
    def is_error(self) -> bool:
        return self.status not in ("ok", *HELD)


def summarize_args(args: dict[str, Any], max_len: int = 200) -> str:
    text = json.dumps(args, ensure_ascii=False)
    return text if len(text) <= max_len else text[: max_len - 1] + "\u2026"


def find_tool(ref: str, toolbox: Toolbox | None) -> Path:
    """`ref` is a tool file path, or a tool's name in the toolbox."""
    p = Path(ref).expanduser()
    try:
        if p.is_file():
            return p.resolve()
    except OSError as exc:  # a folder on the way that cannot be read
        raise GateError(f"{ref}: cannot read ({exc.strerror or exc})") from None
    if toolbox is not None and "/" not in ref and not ref.endswith(".py"):
        try:
            found = toolbox.find(ref)
        except ToolboxError as exc:
            raise GateError(str(exc)) from None
        if found is not None:
            return found.resolve()
        raise GateError(f"no tool named {ref!r} in the toolbox {toolbox.root}")
    if p.is_dir():
        raise GateError(f"{ref}: is a folder; give a tool file or a tool name")
    if p.exists():  # a FIFO, a device, a socket: never opened
        raise GateError(f"{ref}: not a regular file; give a tool file or a tool name")
    raise GateError(
        f"{ref}: no such tool file" + ("" if toolbox else " (and no toolbox to look in)")
    )


def _output_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def find_tainted_inputs(
    args: dict[str, Any], manifest: RunManifest, recent: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """[{"inputName", "matchedTools"}] (the runtime's TaintMatch) for each non-tainted_ok input
    carrying a recent output: a string arg (at any depth) equal to, inside, or containing a
    string a recent call returned (at any depth of its output)."""
    returned = [(tool, _returned_strings(output)) for tool, output in recent]
    found: list[dict[str, Any]] = []
    for inp in manifest.inputs:
        if inp.tainted_ok or inp.name not in args:
            continue
        sources: list[str] = []
        for text in _strings(args[inp.name]):
            if len(text) < MIN_TAINT_LENGTH:
                continue
            for tool, strings in returned:
                if tool in sources:
                    continue
                if any(text in s or (len(s) >= MIN_TAINT_LENGTH and s in text) for s in strings):
                    sources.append(tool)
        if sources:
            found.append({"inputName": inp.name, "matchedTools": sources})
    return found


def check_args(args: Any, manifest: RunManifest) -> str | None:
    """Why the call cannot work (unknown or missing inputs), before any gate holds it."""
    if not isinstance(args, dict):
        return "the arguments must be a JSON object"
    names = [i.name for i in manifest.inputs]
    unknown = [k for k in args if k not in names]
    if unknown:
        return f"{manifest.name} has no input {unknown[0]!r} (inputs: {', '.join(names) or 'none'})"
    missing = [
        i.name for i in manifest.inputs if i.required and not i.has_default and i.name not in args
    ]
    if missing:
        return f"{manifest.name} needs the input {missing[0]!r}"
    for inp in manifest.inputs:
        if inp.name in args:
            # Items are checked only when declared: an undeclared item type constrains nothing.
            items = inp.items.type if inp.type == "array" and inp.items else None
            wrong = _type_problem(args[inp.name], inp.type, items)
            if wrong:
                return f"{manifest.name}: the input {inp.name!r} {wrong}"
    return None


def _fits(value: Any, type_: str) -> bool:
    # As JSON Schema reads types: a bool is never a number, and 5.0 is an integer.
    if type_ == "integer" and isinstance(value, float) and not isinstance(value, bool):
        return value.is_integer()
    return fits_json_type(value, type_)


def _type_problem(value: Any, type_: str, items: str | None) -> str | None:
    """What is wrong with an argument's type against the tool's input schema, or None: the
    same check for every caller (serve, run, the TUI's try-it), before anything is held or run."""
    if type_ not in JSON_PY_TYPES:
        return None  # lint reports an unknown input type; the runtime passes such values on
    if not _fits(value, type_):
        return f"must be {_a(type_)}, not {_a(json_type(value))}"
    if items is not None and items in JSON_PY_TYPES:
        for index, item in enumerate(value):
            if not _fits(item, items):
                return f"must be an array of {items}s: item {index} is {_a(json_type(item))}"
    return None


def _a(type_: str) -> str:
    return {
        "integer": "an integer",
        "array": "an array",
        "object": "an object",
        "null": "null",
    }.get(type_, f"a {type_}")


def confirmation_payload(
    action: Action, tainted: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The Patch runtime's confirmation_required answer, plus expires_at."""
    out: dict[str, Any] = {
        "status": "confirmation_required",
        "kind": action.kind,
        "tool": action.tool,
        "confirmation_token": action.token,
        "args_summary": summarize_args(action.args),
        "reason": action.reason,
        "expires_at": action.expires_at,
    }
    if tainted is not None:
        out["tainted_inputs"] = tainted
    warning = workspace.warning(action)
    if warning is not None:
        # Said before anyone approves: this call, as it stands, cannot do what it asks.
        out["workspace_warning"] = warning
    # Deliberately no shell command here: an agent that can run commands must not be handed the
    # way to approve its own call. Approval happens out of band, by a person.
    out["instruction"] = (
        "Surface this to the user. A person must approve this call in the patch-tui inbox; "
        "only after that, call patch_confirm_action with "
        f'{{"confirmation_token": "{action.token}"}}. Never approve it yourself. '
        f"The token expires at {action.expires_at}."
    )
    return out


class Gate:
    def __init__(
        self,
        store: Store,
        *,
        toolbox: Toolbox | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        allow_install: bool = True,
        venv_root: Path | None = None,
        workspace: str | os.PathLike[str] | None = ".",
    ) -> None:
        """`workspace`: where a read-write tool may write; "." (the default) is the folder the
        call is made from, as `run`, `confirm` and try-it have it; None: nowhere but the run's
        own folder (serve without a configured `serve_workspace`)."""
        self.store = store
        self.toolbox = toolbox
        self.timeout = timeout
        self.allow_install = allow_install
        self.venv_root = venv_root
        self.workspace = workspace

    def _isolation(self, gated: bool) -> Isolation:
        workspace = None if self.workspace is None else Path(self.workspace).absolute()
        return Isolation(
            workspace=workspace,
            store=getattr(self.store, "path", None),
            toolbox=self.toolbox.root if self.toolbox is not None else None,
            gated=gated,
        )

    def _unisolated(self) -> Outcome | None:
        """A gated call where nothing can isolate it: refused before anyone is asked."""
        why = sandbox.why_unisolated()
        if why is None or sandbox.allow_unisolated():
            return None
        return Outcome("failed", {"error": sandbox.refusal_message(why)})

    # -- a call -------------------------------------------------------------------------------

    def _load(self, path: Path) -> tuple[bytes, toolfile.ToolFile]:
        try:
            raw = toolfile.read_bytes(path)  # refuses FIFOs, devices, huge files by type
        except OSError as exc:
            raise GateError(f"{path}: cannot read the tool: {exc.strerror or exc}") from None
        return raw, toolfile.parse_bytes(raw, path=str(path))

    def call(
        self,
        path: str | os.PathLike[str],
        args: dict[str, Any],
        *,
        text: str | None = None,
        by_person: bool = False,
    ) -> Outcome:
        """`text`: the tool's current (maybe unsaved) text, as the TUI's try-it runs it; a held
        call then binds that text's sha256, so confirming runs only once the file says the same.

        `by_person`: the args were typed by a person (try-it, `run --as-person`), not passed on
        by an agent: they are never taken for another tool's output, so the taint gate does not
        look at them (a human_confirm tool is still held)."""
        p = Path(path).resolve()
        raw: bytes | None = None
        if text is not None:
            tf = toolfile.parse(text, path=str(p))
        else:
            raw, tf = self._load(p)
        manifest = tf.run_manifest
        if manifest is None:
            why = tf.problems[0].message if tf.problems else str(tf.manifest_error)
            return Outcome("failed", {"error": f"{p}: the manifest is not valid: {why}"})
        bad = check_args(args, manifest)
        if bad:
            return Outcome("invalid", {"error": bad})
        tainted = self._tainted(args, manifest) if not by_person else []
        if tainted or manifest.capabilities.human_confirm:
            refused = self._unisolated()
            if refused is not None:
                return refused
        if tainted:
            sources = list(dict.fromkeys(s for t in tainted for s in t["matchedTools"]))
            reason = (
                "Tainted data is being passed to inputs that are not declared tainted_ok: "
                f"{', '.join(t['inputName'] for t in tainted)}. Origin: {origin_words(tainted, sources)}."
            )
            action = self._hold(
                "tainted_input",
                manifest,
                tf,
                p,
                args,
                reason,
                {"tainted_inputs": tainted, "source_tools": sources},
            )
            return Outcome(
                "confirmation_required", confirmation_payload(action, tainted), action=action
            )
        if manifest.capabilities.human_confirm:
            action = self._hold("human_confirm", manifest, tf, p, args, HUMAN_CONFIRM_REASON, None)
            # A standing grant that matches approves it at once (recorded as the grant's decision),
            # and the call then goes through confirm like any approved one.
            from patch_tui.approvals import grants  # a hold's, not a plain run's, import

            if grants.apply(self.store, action, self._grant_workspace()) is not None:
                return self.confirm_action(action.token)
            return Outcome("confirmation_required", confirmation_payload(action), action=action)
        return self._execute(tf, p, args, raw)

    def _tainted(self, args: dict[str, Any], manifest: RunManifest) -> list[dict[str, Any]]:
        timed = recent_outputs_at(self.store)
        recent = (
            [(tool, output) for tool, output, _at in timed]
            if timed is not None
            else self.store.recent_outputs()
        )
        tainted = find_tainted_inputs(args, manifest, recent)
        if tainted and timed is not None:
            texts = {
                t["inputName"]: [
                    s for s in _strings(args.get(t["inputName"])) if len(s) >= MIN_TAINT_LENGTH
                ]
                for t in tainted
            }
            taint_origins(tainted, texts, timed)
        return tainted

    def _hold(
        self,
        kind: str,
        manifest: RunManifest,
        tf: toolfile.ToolFile,
        path: Path,
        args: dict[str, Any],
        reason: str,
        details: dict[str, Any] | None,
    ) -> Action:
        flag = self._workspace_flag(manifest, path, args)
        if flag is not None:
            details = {**(details or {}), "workspace": flag}
        return self.store.create_pending(
            kind,
            manifest.name,
            manifest.version,
            tf.sha256,
            args,
            reason,
            tool_path=str(path),
            details=details,
        )

    def _workspace_flag(
        self, manifest: RunManifest, path: Path, args: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Path args this call could not write where it will run: kept on the held action, so
        every front end says so before anyone approves (approvals/workspace.py)."""
        return workspace.flag_for_call(
            args, manifest, path, self._isolation(gated=True), self._runs_dir(path)
        )

    def workspace_warning(self, path: str | os.PathLike[str], args: dict[str, Any]) -> str | None:
        """What a held call's flag would say, for a call about to run unheld (`patch-tui run`
        says it before the run, not as a traceback after it)."""
        p = Path(path).resolve()
        try:
            _raw, tf = self._load(p)
        except GateError:
            return None
        manifest = tf.run_manifest
        if manifest is None or not isinstance(args, dict):
            return None
        flag = self._workspace_flag(manifest, p, args)
        return workspace.describe(flag, held=False) if flag is not None else None

    def _runs_dir(self, path: Path) -> Path | None:
        if self.toolbox is not None:
            return self.toolbox.runs_dir
        try:
            return Toolbox.open(path).runs_dir
        except (ToolboxError, OSError):
            return None

    def _execute(
        self,
        tf: toolfile.ToolFile,
        path: Path,
        args: dict[str, Any],
        raw: bytes | None = None,
        expected_sha256: str | None = None,
        *,
        gated: bool = False,
    ) -> Outcome:
        """Run the tool: `raw`, the file's bytes as read once (and, when confirming, refused
        unless their sha256 is `expected_sha256`), or else the text of `tf` (try-it's)."""
        common: dict[str, Any] = {
            "timeout": self.timeout,
            "allow_install": self.allow_install,
            "runs_dir": self._runs_dir(path),
            "venv_root": self.venv_root,
            "path": str(path),
            "isolation": self._isolation(gated),
        }
        if raw is not None:
            run = run_bytes(raw, args, expected_sha256=expected_sha256, **common)
        else:
            run = run_source(tf.text, args, **common)
        if not run.ok:
            return Outcome("failed", {"error": run.error, "run_id": run.run_id}, run=run)
        text = _output_text(run.result)
        manifest = tf.run_manifest
        if len(text) >= MIN_TAINT_LENGTH and manifest is not None:
            self.store.record_output(manifest.name, text)
        return Outcome("ok", run.result, run=run)

    # -- confirm ------------------------------------------------------------------------------

    def _locate(self, action: Action) -> Path | None:
        if action.tool_path and Path(action.tool_path).is_file():
            return Path(action.tool_path)
        if self.toolbox is not None:
            return self.toolbox.find(action.tool)
        return None

    def _grant_workspace(self) -> Path | None:
        """Where a grant's path patterns resolve a relative value: the tool's workspace, the
        folder it writes in (the current folder when it has none)."""
        return None if self.workspace is None else Path(self.workspace).absolute()

    def confirm_action(self, token: str) -> Outcome:
        # Verified here, where it runs: every signature (or the grant's) against the trusted
        # approvers as they are now, inside the claim's transaction (approvals/decisions.py).
        from patch_tui.approvals import decisions, edits  # confirm's, not a plain run's

        decision = decisions.claim(self.store, token, workspace=self._grant_workspace())
        if not decision.ok:
            return self._refusal(token, decision.code, decision.action, decision.why)
        action = decision.action
        assert action is not None
        path = self._locate(action)
        tf: toolfile.ToolFile | None = None
        raw: bytes | None = None
        if path is not None:
            try:
                raw, tf = self._load(path)
            except GateError:
                tf = None
        # The hash of the very bytes that will run (not of a re-read or re-encoded copy).
        actual = hashlib.sha256(raw).hexdigest() if raw is not None else None
        if tf is None or raw is None or actual != action.source_sha256:
            payload = {
                "status": "tool_changed",
                "tool": action.tool,
                "confirmation_token": token,
                "approved_sha256": action.source_sha256,
                "current_sha256": actual,
                "message": (
                    f"{action.tool} changed (or is gone) since the call was approved; it was "
                    "not run. Make the call again to get a new confirmation."
                ),
            }
            self.store.finish(token, False, payload)
            return Outcome("tool_changed", payload, action=action)
        assert path is not None
        manifest = tf.manifest
        if (
            action.kind == "tainted_input"
            and manifest is not None
            and manifest.capabilities.human_confirm
        ):
            # The taint gate passed; the human_confirm gate still stands, with its own token.
            nxt = self._hold(
                "human_confirm",
                manifest,
                tf,
                path,
                action.args,
                HUMAN_CONFIRM_REASON,
                {"after_tainted_input": token},
            )
            payload = confirmation_payload(nxt)
            self.store.finish(
                token, True, {"status": "passed_to_human_confirm", "confirmation_token": nxt.token}
            )
            return Outcome("confirmation_required", payload, action=nxt)
        if args_sha256(action.args) != action.args_sha256:
            # the claim verified the signatures on these very args; this guards the parse in between.
            payload = self._changed_args(action, token)
            self.store.finish(token, False, payload)
            return Outcome("args_changed", payload, action=action)
        try:
            outcome = self._execute(
                tf, path, action.args, raw=raw, expected_sha256=action.source_sha256, gated=True
            )
        except BaseException as exc:
            self.store.finish(token, False, {"error": f"the run crashed: {exc!r}"})
            raise
        note = edits.agent_note(action)
        if note is not None:
            # The agent must learn that what ran is not what it asked for.
            if outcome.status == "ok":
                outcome.payload = {"result": outcome.payload, "args_changed": note}
            else:
                outcome.payload = {**outcome.payload, "args_changed": note}
        record = outcome.payload if outcome.status == "ok" else dict(outcome.payload)
        ran = {"args_sha256": action.args_sha256}
        if outcome.run is not None:
            ran.update(run_id=outcome.run.run_id, source_sha256=outcome.run.file_sha256)
        self.store.finish(token, outcome.status == "ok", record, ran=ran)
        outcome.action = self.store.get(token)
        return outcome

    @staticmethod
    def _changed_args(action: Action, token: str) -> dict[str, Any]:
        return {
            "status": "args_changed",
            "tool": action.tool,
            "confirmation_token": token,
            "message": (
                "The call's args were changed after a person approved them; it was not run. "
                "Make the call again to get a new confirmation."
            ),
        }

    def _refusal(self, token: str, code: str, action: Action | None, why: str) -> Outcome:
        base: dict[str, Any] = {"status": code, "confirmation_token": token}
        if action is not None:
            base["tool"] = action.tool
        if code == "unknown_token":
            base["message"] = (
                "No such confirmation token. Make the original tool call again to get one."
            )
        elif code == "awaiting_approval":
            base["message"] = (
                "Not approved yet. Ask the user to approve it in the patch-tui inbox, then call "
                "patch_confirm_action again. Nothing was run."
            )
            if action is not None:
                base["expires_at"] = action.expires_at
        elif code == "rejected":
            base["reason"] = action.note if action is not None else None
            base["message"] = "The user rejected this call; it was not run."
        elif code == "expired":
            base["message"] = (
                "The confirmation expired before it was used; make the call again for a new one."
            )
        elif code == "args_changed" and action is not None:
            base = Gate._changed_args(action, token)  # guard calls this with self=None
        elif code == "tampered":
            base["message"] = (
                f"This call's approval is not genuine ({why}); it was not run. Make the call "
                "again and have a person approve it in the patch-tui inbox."
            )
        elif code == "not_run":
            base["message"] = f"It was not run: {why}. Make the call again."
        else:
            base["status"] = "already_used"
            base["message"] = f"This confirmation cannot run the call again: {why}."
            if action is not None:
                base["previous_status"] = action.status
        return Outcome(base["status"], base, action=action)
