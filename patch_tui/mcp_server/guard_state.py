"""Guard's state and decisions, independent of the transport: the store, the toolbox, the
upstream client; holding calls, taking over the upstream's confirmations, and confirming approved
ones (what and why: the docstring of mcp_server.guard, the command's module).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

from patch_tui.approvals import decisions, edits, grants
from patch_tui.approvals.gate import HUMAN_CONFIRM_REASON, confirmation_payload
from patch_tui.approvals.store import KINDS, Action, Store, args_sha256
from patch_tui.format import runtime_format, toolfile
from patch_tui.mcp_server import guard_audit
from patch_tui.mcp_server.confirm_wait import DEFAULT_WAIT, wait_for_decision
from patch_tui.mcp_server.guard_protocol import (
    META_CONFIRM,
    UNKNOWN_VERSION,
    Identity,
    UpstreamGone,
    _error,
    _listing_sha,
    _result,
    answer_payload,
    compose_step_ids,
    confirm_tool,
    held_args,
    is_confirmation,
    log,
    refusal,
    same_args,
    token_gone,
)
from patch_tui.runtime.toolbox import Toolbox, ToolboxError


class Guard:
    """Guard's state, independent of the transport: the store, the toolbox, the upstream."""

    def __init__(
        self,
        store: Store,
        *,
        toolbox: Toolbox | None,
        holds: Sequence[str] = (),
        wait: float = DEFAULT_WAIT,
        label: str = "",
    ) -> None:
        self.store = store
        self.toolbox = toolbox
        self.holds = list(holds)
        self.wait = wait
        self.label = label
        self.upstream: Any = None  # mcp.Client, once connected
        self.gone: str | None = None  # why the upstream is not there, once it is not
        self.listed: dict[str, Any] = {}
        self.sessions: list[Any] = []
        self._answer: Any = None  # the upstream answer being taken over, while it is

    # -- upstream plumbing ----------------------------------------------------------------------

    async def _upstream_call(self, name: str, args: dict[str, Any]) -> Any:
        if self.gone is not None or self.upstream is None:
            raise UpstreamGone(self.gone or "the upstream server is not connected")
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        try:
            return await self.upstream.call_tool(name, args)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED or "closed" in str(exc.error.message).lower():
                self.gone = (
                    self.gone or f"the upstream server closed the connection ({exc.error.message})"
                )
                raise UpstreamGone(self.gone) from None
            return _error("UpstreamError", str(exc.error.message))
        except (OSError, EOFError) as exc:  # anyio's broken pipes and closed streams
            self.gone = self.gone or f"the upstream server is gone ({type(exc).__name__})"
            raise UpstreamGone(self.gone) from None
        except Exception as exc:
            if type(exc).__name__ in ("ClosedResourceError", "BrokenResourceError", "EndOfStream"):
                self.gone = self.gone or "the upstream server is gone"
                raise UpstreamGone(self.gone) from None
            raise

    async def list_tools(self, cursor: str | None = None) -> Any:
        if self.gone is not None or self.upstream is None:
            raise UpstreamGone(self.gone or "the upstream server is not connected")
        result = await self.upstream.list_tools(cursor=cursor)
        for tool in result.tools:
            self.listed[tool.name] = tool
        if cursor is None and not any(t.name == META_CONFIRM for t in result.tools):
            result = result.model_copy(update={"tools": [*result.tools, confirm_tool()]})
        return result

    async def _listing_of(self, name: str, *, fresh: bool = False) -> Any:
        if fresh or name not in self.listed:
            try:
                cursor: str | None = None
                while True:
                    page = await self.upstream.list_tools(cursor=cursor)
                    for tool in page.tools:
                        self.listed[tool.name] = tool
                    cursor = page.next_cursor
                    if not cursor:
                        break
            except Exception as exc:  # the call itself will report an upstream that is gone
                log(f"cannot list the upstream's tools: {type(exc).__name__}: {exc}")
        return self.listed.get(name)

    async def identity(self, name: str, *, fresh: bool = False) -> Identity:
        import anyio

        found = await anyio.to_thread.run_sync(self._file_identity, name)
        if found is not None:
            return found
        tool = await self._listing_of(name, fresh=fresh)
        return Identity(UNKNOWN_VERSION, _listing_sha(tool), None, "listing")

    def _file_identity(self, name: str) -> Identity | None:
        if self.toolbox is None:
            return None
        try:
            path = self.toolbox.find(name)
            if path is None:
                return None
            raw = path.read_bytes()
        except (OSError, ToolboxError):
            return None
        tf = toolfile.parse_bytes(raw, path=str(path))
        if tf.manifest is None or tf.manifest.name != name:
            return None
        human_confirm: bool | None = None
        runtime_sha: str | None = None
        try:
            parsed = runtime_format.parse(tf.text)
        except runtime_format.RuntimeRejects:
            pass  # the runtime cannot load it either; unknown stays None (treated as held)
        else:
            human_confirm = parsed.manifest["capabilities"]["human_confirm"] is True
            runtime_sha = runtime_format.source_sha256(parsed.manifest, parsed.body)
        return Identity(
            tf.manifest.version, tf.sha256, str(path), "file", human_confirm, runtime_sha
        )

    def _pins_refused(self, name: str) -> str | None:
        """Why a call to the toolbox's tool `name` is refused before it reaches the upstream: a
        runtime.packages entry that is not a pin (pip would take it as an option, a URL or a
        path). None when guard cannot read the file (the upstream decides)."""
        from patch_tui.runtime.venvs import pin_problem

        if self.toolbox is None:
            return None
        try:
            path = self.toolbox.find(name)
            tf = toolfile.parse_bytes(path.read_bytes(), path=str(path)) if path else None
        except (OSError, ToolboxError):
            return None
        if tf is None or tf.manifest is None:
            return None
        for pin in tf.manifest.runtime.packages:
            bad = pin_problem(pin)
            if bad is not None:
                return f"{name}: refused: {bad}; the call was not forwarded"
        return None

    # -- holding -----------------------------------------------------------------------------

    def hold_reason(self, name: str) -> str | None:
        """Why guard itself holds a call to `name` (servers without a confirmation protocol)."""
        if name == META_CONFIRM:
            return None
        for pattern in self.holds:
            if fnmatch.fnmatchcase(name, pattern):
                return f"Held by patch-tui guard: {name} matches --hold {pattern}."
        tool = self.listed.get(name)
        hints = getattr(tool, "annotations", None)
        if hints is not None and getattr(hints, "destructive_hint", None) is True:
            return f"Held by patch-tui guard: the server marks {name} destructiveHint: true."
        return None

    async def _record(
        self,
        kind: str,
        tool: str,
        args: dict[str, Any],
        reason: str,
        *,
        upstream_token: str | None,
        details: dict[str, Any],
    ) -> Action:
        import anyio

        ident = await self.identity(tool)
        details = {**details, "held_by": "guard", "source_basis": ident.basis}
        if self.label:
            details["upstream"] = self.label
        return await anyio.to_thread.run_sync(
            lambda: self.store.create_pending(
                kind if kind in KINDS else "human_confirm",
                tool,
                ident.version,
                ident.sha256,
                args,
                reason,
                tool_path=ident.path,
                details=details,
                upstream_token=upstream_token,
            )
        )

    async def _take_over(
        self, value: Any, called: str, args: dict[str, Any], seen: dict[str, Any] | None = None
    ) -> tuple[Any, int]:
        """`value` with every upstream confirmation_required replaced by guard's own (recorded
        in the store); the number replaced. `seen`: the upstream tokens already recorded in this
        answer (patch_compose shows its paused call twice: in its step and under `paused`), so
        one upstream hold is one inbox item."""
        seen = {} if seen is None else seen
        if is_confirmation(value):
            upstream_token = value["confirmation_token"]
            if upstream_token in seen:
                return seen[upstream_token], 0
            tool = value.get("tool") if isinstance(value.get("tool"), str) else called
            step = compose_step_ids(self._answer).get(upstream_token) if self._answer else None
            exact, unknown = held_args(value, tool, called, args, step_id=step)
            details: dict[str, Any] = {"upstream_tool": tool}
            if exact is None:
                details["args_known"] = False
                details["args_unknown"] = unknown
                details["args_summary"] = value.get("args_summary")
                log(f"{tool}: held upstream with args guard cannot know ({unknown})")
            if "tainted_inputs" in value:
                details["tainted_inputs"] = value["tainted_inputs"]
            action = await self._record(
                str(value.get("kind", "human_confirm")),
                tool,
                exact if exact is not None else {},
                str(value.get("reason") or "The upstream server asked for a confirmation."),
                upstream_token=upstream_token,
                details=details,
            )
            mine = confirmation_payload(action, value.get("tainted_inputs"))
            if exact is None:
                # The agent must not wait for an approval that cannot come (approvals.approvable).
                mine["approvable"] = False
                mine["message"] = (
                    f"patch-tui guard cannot know the exact args of this {tool} call ({unknown}), "
                    "so no person can approve it; it can only be rejected. Make the call on its "
                    "own, with literal args."
                )
            seen[upstream_token] = mine
            return mine, 1
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            count = 0
            for key, item in value.items():
                out[key], n = await self._take_over(item, called, args, seen)
                count += n
            return out, count
        if isinstance(value, list):
            items = []
            count = 0
            for item in value:
                new, n = await self._take_over(item, called, args, seen)
                items.append(new)
                count += n
            return items, count
        return value, 0

    # -- tools/call ---------------------------------------------------------------------------

    async def call(self, name: str, args: dict[str, Any], report: Any = None) -> Any:
        if name == META_CONFIRM:
            token = args.get("confirmation_token")
            if not isinstance(token, str) or not token:
                return _error("PatchError", "confirmation_token (a string) is required.")
            return await self.confirm(token, report)
        import anyio

        refused = await anyio.to_thread.run_sync(self._pins_refused, name)
        if refused is not None:
            return _error("PatchError", refused)
        reason = self.hold_reason(name)
        if reason is None and name not in self.listed:
            await self._listing_of(name)  # annotations of a tool called before any listing
            reason = self.hold_reason(name)
        if reason is not None:
            action = await self._record(
                "human_confirm", name, args, reason, upstream_token=None, details={}
            )
            granted = await self._granted(action.token)
            if granted is not None:
                return granted
            return _result(confirmation_payload(action), False)
        try:
            result = await self._upstream_call(name, args)
        except UpstreamGone as exc:
            return _error("UpstreamGone", str(exc))
        return await self._relay(result, name, args)

    async def _relay(self, result: Any, name: str, args: dict[str, Any]) -> Any:
        payload = answer_payload(result)
        if payload is None:
            return result
        self._answer = payload  # which compose step holds which token (held_args)
        try:
            replaced, count = await self._take_over(payload, name, args)
        finally:
            self._answer = None
        if count == 0:
            return result  # nothing gated: exactly what the upstream said
        if is_confirmation(replaced):
            granted = await self._granted(replaced["confirmation_token"])
            if granted is not None:
                return granted
        return _result(replaced, bool(getattr(result, "is_error", False)))

    async def _granted(self, token: str) -> Any:
        """The call confirmed at once when a standing grant (approvals.grants) approves the hold it
        just got; None when none does (human_confirm only, never tainted input)."""
        import anyio

        def apply() -> bool:
            action = self.store.get(token)
            return action is not None and grants.apply(self.store, action) is not None

        if await anyio.to_thread.run_sync(apply):
            return await self.confirm(token)
        return None

    # -- patch_confirm_action ----------------------------------------------------------------

    async def confirm(self, token: str, report: Any = None) -> Any:
        import anyio

        await wait_for_decision(self.store, token, wait=self.wait, report=report)
        decision = await anyio.to_thread.run_sync(decisions.claim, self.store, token)
        if not decision.ok:
            payload = refusal(token, decision.code, decision.action, decision.why)
            return _result(payload, payload["status"] != "awaiting_approval")
        action = decision.action
        assert action is not None
        problem, ident = await self._check(action)
        if problem is not None:
            await anyio.to_thread.run_sync(self.store.finish, token, False, problem)
            return _result(problem, True)
        if action.kind == "tainted_input" and (ident is None or ident.human_confirm is not False):
            # Confirming the runtime's taint token skips its human_confirm gate as well, so the
            # person approves the irreversible call itself: a second action, as serve does.
            return await self._second_approval(action, ident)
        expected = ident.runtime_sha256 if ident is not None else None
        runs_dir = self.toolbox.runs_dir if self.toolbox is not None else None
        before: set[str] | None = None
        if expected is not None and runs_dir is not None:
            before = await anyio.to_thread.run_sync(guard_audit.run_names, runs_dir)
        try:
            result = await self._run_approved(action)
        except UpstreamGone as exc:
            record = {
                "error": "UpstreamGone",
                "message": f"{exc}; it is unknown whether {action.tool} ran. It is never re-run "
                "automatically.",
            }
            await anyio.to_thread.run_sync(self.store.finish, token, False, record)
            return _result(record, True)
        except BaseException as exc:
            record = {"error": type(exc).__name__, "message": f"guard failed confirming: {exc}"}
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.store.finish, token, False, record)
            raise
        payload = answer_payload(result)
        ok = not bool(getattr(result, "is_error", False))
        note = edits.agent_note(action)
        if note is not None and payload is not None and not is_confirmation(payload):
            # The agent must learn that what ran is not what it asked for (as serve says it).
            if ok:
                payload = {"result": payload, "args_changed": note}
            elif isinstance(payload, dict):
                payload = {**payload, "args_changed": note}
            result = _result(payload, not ok)
        ran: dict[str, Any] | None = None
        if before is not None and runs_dir is not None and not is_confirmation(payload):
            runs = await anyio.to_thread.run_sync(
                guard_audit.new_runs, runs_dir, before, action.tool
            )
            ran = {"audit": "not found"}
            if runs:
                ran = {"run_id": runs[-1][0], "source_sha256": runs[-1][1]}
            other = [(run_id, sha) for run_id, sha in runs if sha != expected]
            if other:
                run_id, sha = other[0]
                ran = {"run_id": run_id, "source_sha256": sha}
                log(
                    f"{action.tool}: the runtime ran source {sha} (run {run_id}), not the approved "
                    f"{expected}; its output is withheld"
                )
                ok = False
                payload = {
                    "error": "PatchError",
                    "status": "ran_other_source",
                    "tool": action.tool,
                    "confirmation_token": token,
                    "run_id": run_id,
                    "approved_source_sha256": expected,
                    "ran_source_sha256": sha,
                    "message": (
                        f"{action.tool} changed between guard's check and the runtime's read: "
                        "the runtime ran a source other than the one approved (its audit record "
                        f"{run_id} says so). Its output is withheld; a person should look at "
                        "that run."
                    ),
                }
                result = _result(payload, True)
        await anyio.to_thread.run_sync(
            lambda: self.store.finish(
                token, ok, payload if payload is not None else {"answer": "not JSON"}, ran=ran
            )
        )
        if payload is not None and is_confirmation(payload):
            # The upstream held the approved call again (another gate): a new inbox item.
            return await self._relay(result, action.tool, action.args)
        return result

    async def _second_approval(self, action: Action, ident: Identity | None) -> Any:
        """The human_confirm action that follows an approved taint hold: the same call (its args,
        the runtime's token, which stays unconfirmed) as a new pending action with its own
        token. The taint action is finished as `passed_to_human_confirm`; the agent gets the new
        confirmation_required."""
        import anyio

        if ident is not None and ident.human_confirm:
            reason = HUMAN_CONFIRM_REASON
        else:
            reason = (
                f"patch-tui guard cannot read {action.tool}'s manifest, so it cannot tell whether "
                "the tool is marked human_confirm; the runtime would run it with no further "
                "check once confirmed, so approve the call itself."
            )
        details = {
            key: value
            for key, value in (action.details or {}).items()
            if key in ("upstream_tool", "args_known", "args_summary", "source_basis", "upstream")
        }
        details.update(held_by="guard", after_tainted_input=action.token)
        if action.proposed_args is not None:
            details["upstream_args_differ"] = True  # the runtime's token holds the proposed args
        nxt = await anyio.to_thread.run_sync(
            lambda: self.store.create_pending(
                "human_confirm",
                action.tool,
                action.version,
                action.source_sha256,
                action.args,
                reason,
                tool_path=action.tool_path,
                details=details,
                upstream_token=action.upstream_token,
            )
        )
        await anyio.to_thread.run_sync(
            self.store.finish,
            action.token,
            True,
            {"status": "passed_to_human_confirm", "confirmation_token": nxt.token},
        )
        log(f"{action.tool}: taint approved; the human_confirm approval is a new inbox item")
        return _result(confirmation_payload(nxt), False)

    async def _check(self, action: Action) -> tuple[dict[str, Any] | None, Identity | None]:
        """(why a claimed approval must not be forwarded, or None; the tool's identity now, or
        None when it was not looked up)."""
        import anyio

        events = await anyio.to_thread.run_sync(lambda: self.store.events(action.token))
        if not any(e.event == "approved" for e in events):
            return {
                "status": "not_approved",
                "tool": action.tool,
                "confirmation_token": action.token,
                "message": "The store shows no approval event for this action; it was not run.",
            }, None
        if args_sha256(action.args) != action.args_sha256:
            return {
                "status": "args_changed",
                "tool": action.tool,
                "confirmation_token": action.token,
                "message": "The stored args no longer match what was approved; it was not run.",
            }, None
        if (action.details or {}).get("args_known") is False:
            # Never approvable (approvals/approvable.py): an approval of one is not genuine.
            return {
                "status": "failed",
                "message": "The args of this call are not known exactly; it was not run.",
            }, None
        basis = (action.details or {}).get("source_basis", "file")
        current = await self.identity(action.tool, fresh=True)
        if basis == "file" and current.basis != "file":
            current_sha: str | None = None
        else:
            current_sha = current.sha256
        if current_sha != action.source_sha256:
            return {
                "status": "tool_changed",
                "tool": action.tool,
                "confirmation_token": action.token,
                "approved_sha256": action.source_sha256,
                "current_sha256": current_sha,
                "message": (
                    f"{action.tool} changed (or is gone) since the call was approved; it was "
                    "not run. Make the call again to get a new confirmation."
                ),
            }, current
        return None, current

    async def _run_approved(self, action: Action) -> Any:
        if action.upstream_token is None:
            # Held by guard itself: the approved call goes upstream now, exactly as approved.
            return await self._upstream_call(action.tool, action.args)
        details = action.details or {}
        if action.proposed_args is None and not details.get("upstream_args_differ"):
            result = await self._upstream_call(
                META_CONFIRM, {"confirmation_token": action.upstream_token}
            )
            if not token_gone(result):
                return result
        # else: a person edited the args before approving. The runtime's token holds the args the
        # agent proposed, so it is never confirmed: the approved args are called afresh below.
        if details.get("args_known") is False:
            return _error(
                "PatchError",
                "The upstream confirmation expired, and the args of this call are not known "
                "exactly, so it cannot be made again; it was not run. Make the call again.",
            )
        # The runtime forgot the token (60 s, in memory), or it holds other args than the approved
        # ones: the approved call again, then its fresh token at once, only when it is the same
        # tool and args.
        log(f"{action.tool}: calling it again upstream with the approved args")
        again = await self._upstream_call(action.tool, action.args)
        fresh = answer_payload(again)
        if not is_confirmation(fresh):
            return again  # not held upstream any more: that call was the run
        approved_kinds: set[str] = {action.kind}
        if details.get("after_tainted_input"):
            approved_kinds.add("tainted_input")
        if fresh.get("kind", "human_confirm") not in approved_kinds:
            # A gate the person did not pass (a taint that appeared since, or human_confirm
            # after a taint-only approval): confirming the token would skip it. A new inbox item.
            log(f"{action.tool}: the repeated call is held for {fresh.get('kind')!r}: a new action")
            return again
        if fresh.get("tool", action.tool) != action.tool or not same_args(
            fresh.get("args_summary"), action.args
        ):
            return _error(
                "PatchError",
                f"The upstream answered the repeated call for {fresh.get('tool')!r} with "
                f"{fresh.get('args_summary')!r}, not the approved call; it was not confirmed.",
            )
        return await self._upstream_call(
            META_CONFIRM, {"confirmation_token": fresh["confirmation_token"]}
        )
