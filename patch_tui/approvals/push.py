"""Push alerts to an approver's phone when an action arrives: ntfy, a generic JSON webhook,
Slack and Discord incoming webhooks, and email over SMTP.

    targets = load_targets(approvers_file)        -> list[PushTarget]   `[[approver.push]]` tables
    message = push_message(action, base_url)      -> PushMessage        what every channel says
    send(target, message, retries=3)              -> PushResult         with retries and backoff
    PushDispatcher(targets, base_url, still_pending, failures=FailureLog(...))
                                                  sends after the presence delay
    FailureLog(failure_log_path(store))           failed pushes, one JSON line each, beside the
                                                  store: the web app appends, the TUI reads what
                                                  is new and shows it (ui/inbox/inbox_badge.py)

What a push says: the tool, a one-line summary of the args marked as untrusted (through the one
display rule, untrusted/text_safety.py, so no control or hidden character reaches a lock screen),
the expiry, and a link to the action's page in the web app. Never anything that approves by
itself: the link names the action (its token is a handle, approvals/store.py), and deciding
there takes a passkey assertion over the exact statement. A push to a third-party service is
therefore no more than a notice.

The presence delay (`alert_delay` seconds, per approver): a push waits that long and goes only if
the action is still pending then, so a person at the terminal who decides first is not buzzed.

An approvers file entry:

    [[approver.push]]
    kind = "ntfy"                    # ntfy | webhook | slack | discord | email
    url = "https://ntfy.sh/my-topic" # the topic / webhook URL (kind = "email": the SMTP relay,
                                     # smtp://host:port, with `to` and `from`)
    alert_delay = 20                 # optional, seconds
"""

from __future__ import annotations

import json
import logging
import os
import smtplib
import threading
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from patch_tui.approvals.values import Action
from patch_tui.untrusted.text_safety import visible

log = logging.getLogger("patch_tui.push")

KINDS = ("ntfy", "webhook", "slack", "discord", "email")
SUMMARY_LIMIT = 160
TIMEOUT = 10.0
BACKOFF = 1.0  # seconds before the first retry; doubled each time


class PushConfigError(Exception):
    """A `[[approver.push]]` table that cannot be used; the message is for a person."""


@dataclass(frozen=True)
class PushTarget:
    approver: str
    kind: str
    url: str
    delay: float = 0.0
    to: str | None = None  # email
    sender: str | None = None  # email

    @property
    def where(self) -> str:
        """Where it goes, for logs and the status page, without a webhook's secret path."""
        if self.kind == "email":
            return f"email to {self.to}"
        parts = urllib.parse.urlsplit(self.url)
        return f"{self.kind} {parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class PushMessage:
    token: str
    title: str
    summary: str  # one line, untrusted text made visible, prefixed as untrusted
    expires_at: str
    link: str

    def text(self) -> str:
        return f"{self.summary}\nexpires {self.expires_at}\n{self.link}"


@dataclass
class PushResult:
    target: PushTarget
    token: str
    ok: bool
    attempts: int
    error: str | None = None
    at: float = field(default_factory=time.time)


def _one_line(text: str, limit: int) -> str:
    safe = visible(text).replace("\n", " ").replace("\t", " ").replace("\r", " ")
    return safe if len(safe) <= limit else safe[: limit - 1] + "\u2026"


def push_message(action: Action, base_url: str) -> PushMessage:
    tool = _one_line(action.tool, 60)
    args = json.dumps(action.args, ensure_ascii=False, sort_keys=True)
    return PushMessage(
        token=action.token,
        title=f"patch-tui: {tool} waits for approval",
        summary="args (untrusted, from the agent): " + _one_line(args, SUMMARY_LIMIT),
        expires_at=action.expires_at,
        link=f"{base_url.rstrip('/')}/actions/{urllib.parse.quote(action.token, safe='')}",
    )


def load_targets(approvers_file: Path) -> list[PushTarget]:
    try:
        data = tomllib.loads(approvers_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PushConfigError(f"{approvers_file}: cannot read the approvers file: {exc}") from None
    out: list[PushTarget] = []
    for approver in data.get("approver", []) or []:
        name = approver.get("name") if isinstance(approver, dict) else None
        if not isinstance(name, str):
            continue
        for entry in approver.get("push", []) or []:
            out.append(_target(approvers_file, name, entry))
    return out


def _target(path: Path, name: str, entry: Any) -> PushTarget:
    where = f"{path}: a push of {name!r}"
    if not isinstance(entry, dict):
        raise PushConfigError(f"{where} is not a table")
    kind, url = entry.get("kind"), entry.get("url")
    if kind not in KINDS:
        raise PushConfigError(f"{where} has kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not isinstance(url, str):
        raise PushConfigError(f"{where} needs a url")
    scheme = urllib.parse.urlsplit(url).scheme
    if kind == "email":
        if scheme != "smtp" or not isinstance(entry.get("to"), str):
            raise PushConfigError(f'{where}: email needs url = "smtp://host:port" and `to`')
    elif scheme not in ("https", "http"):
        raise PushConfigError(f"{where}: the url must be https:// (or http:// on loopback)")
    delay = entry.get("alert_delay", 0)
    if not isinstance(delay, int | float) or isinstance(delay, bool) or not 0 <= delay <= 3600:
        raise PushConfigError(f"{where}: alert_delay must be 0 to 3600 seconds")
    return PushTarget(
        approver=name,
        kind=kind,
        url=url,
        delay=float(delay),
        to=entry.get("to"),
        sender=entry.get("from"),
    )


# -- sending --------------------------------------------------------------------------------


def _payload(target: PushTarget, message: PushMessage) -> tuple[bytes, dict[str, str]]:
    if target.kind == "ntfy":
        headers = {
            # ntfy's headers are latin-1 only: the title is ASCII, the body goes as UTF-8 text.
            "Title": message.title.encode("ascii", "replace").decode("ascii"),
            "Click": message.link,
            "Tags": "lock",
            "Content-Type": "text/plain; charset=utf-8",
        }
        return message.text().encode("utf-8"), headers
    if target.kind == "webhook":
        body: dict[str, Any] = {
            "event": "action_waiting",
            "title": message.title,
            "args_summary": message.summary,
            "args_untrusted": True,
            "expires_at": message.expires_at,
            "url": message.link,
        }
    elif target.kind == "slack":
        # Slack reads <...|...> and &-entities as markup: escape them (its documented three).
        esc = message.text().replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        body = {"text": f"{message.title}\n{esc}"}
    else:  # discord
        body = {
            "content": f"{message.title}\n{message.text()}",
            "allowed_mentions": {"parse": []},  # an arg saying @everyone pings nobody
        }
    return json.dumps(body, ensure_ascii=False).encode("utf-8"), {
        "Content-Type": "application/json"
    }


def _send_once(target: PushTarget, message: PushMessage) -> None:
    if target.kind == "email":
        parts = urllib.parse.urlsplit(target.url)
        mail = EmailMessage()
        mail["Subject"] = message.title
        mail["From"] = target.sender or "patch-tui@localhost"
        mail["To"] = target.to or ""
        mail.set_content(message.text())
        with smtplib.SMTP(parts.hostname or "localhost", parts.port or 25, timeout=TIMEOUT) as smtp:
            smtp.send_message(mail)
        return
    data, headers = _payload(target, message)
    request = urllib.request.Request(target.url, data=data, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 (http(s) only)
        answer.read(4096)


def send(
    target: PushTarget,
    message: PushMessage,
    *,
    retries: int = 3,
    backoff: float = BACKOFF,
    sleep: Callable[[float], None] = time.sleep,
) -> PushResult:
    """Sends with up to `retries` retries, waiting backoff, 2*backoff, ... between them. A
    failure is logged and returned, never raised."""
    error = ""
    for attempt in range(1, retries + 2):
        try:
            _send_once(target, message)
        except urllib.error.HTTPError as exc:
            error = f"HTTP {exc.code}"
        except (OSError, smtplib.SMTPException, ValueError) as exc:
            error = str(exc) or type(exc).__name__
        else:
            log.info("push sent: %s for %s... (%s)", target.where, message.token[:8], attempt)
            return PushResult(target, message.token, True, attempt)
        if attempt <= retries:
            sleep(backoff * 2 ** (attempt - 1))
    log.warning("push failed: %s for %s...: %s", target.where, message.token[:8], error)
    return PushResult(target, message.token, False, retries + 1, error)


def failure_log_path(store: Path) -> Path:
    """Where failed pushes are recorded for the store at `store` (beside it, like its key)."""
    return store.with_name(store.name + ".push-failures.jsonl")


class FailureLog:
    """Failed pushes, appended as JSON lines by the web app and read by the TUI. A reader starts
    at the end of what is there (old failures are not news) and takes whole lines only."""

    MAX_BYTES = 1 << 20  # past this the file starts again: a record, not an archive

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._offset = path.stat().st_size
        except OSError:
            self._offset = 0

    def append(self, result: PushResult) -> None:
        line = json.dumps(
            {
                "at": result.at,
                "approver": result.target.approver,
                "where": result.target.where,
                "token": result.token[:8],
                "attempts": result.attempts,
                "error": result.error,
            },
            ensure_ascii=True,
        )
        try:
            if self.path.exists() and self.path.stat().st_size > self.MAX_BYTES:
                self.path.unlink()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="ascii") as out:
                out.write(line + "\n")
        except OSError as exc:
            log.warning("cannot record the failed push in %s: %s", self.path, exc)

    def read_new(self) -> list[str]:
        """One sentence (safe text) per failure recorded since the last read."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return []
        if size < self._offset:  # started again
            self._offset = 0
        if size == self._offset:
            return []
        with self.path.open("rb") as src:
            src.seek(self._offset)
            data = src.read(size - self._offset)
        whole = data[: data.rfind(b"\n") + 1]
        self._offset += len(whole)
        out = []
        for raw in whole.splitlines():
            try:
                entry = json.loads(raw)
                out.append(
                    _one_line(
                        f"A push to {entry['where']} for {entry['approver']} failed after "
                        f"{entry['attempts']} tries ({entry['error']}): action {entry['token']}…",
                        300,
                    )
                )
            except (ValueError, KeyError, TypeError):
                continue
        return out


class PushDispatcher:
    """Sends a push per target for each arrived action, after the target's presence delay and
    only if the action is still pending then. Each send runs in its own daemon thread, so a slow
    relay never holds the web app; results (failures too) are kept for the status page."""

    def __init__(
        self,
        targets: list[PushTarget],
        base_url: str,
        still_pending: Callable[[str], bool],
        *,
        retries: int = 3,
        backoff: float = BACKOFF,
        failures: FailureLog | None = None,
    ) -> None:
        self.targets = targets
        self.failure_log = failures
        self.base_url = base_url
        self.still_pending = still_pending
        self.retries = retries
        self.backoff = backoff
        self.results: list[PushResult] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def arrived(self, actions: tuple[Action, ...] | list[Action]) -> None:
        for action in actions:
            message = push_message(action, self.base_url)
            for target in self.targets:
                threading.Thread(
                    target=self._deliver, args=(target, message), daemon=True, name="push"
                ).start()

    def _deliver(self, target: PushTarget, message: PushMessage) -> None:
        if target.delay and self._stop.wait(target.delay):
            return
        if not self.still_pending(message.token):
            log.info("push skipped: %s... was decided within the delay", message.token[:8])
            return
        result = send(target, message, retries=self.retries, backoff=self.backoff)
        with self._lock:
            self.results.append(result)
            del self.results[:-100]
        if not result.ok and self.failure_log is not None:
            self.failure_log.append(result)

    def failures(self) -> list[PushResult]:
        with self._lock:
            return [r for r in self.results if not r.ok]

    def stop(self) -> None:
        self._stop.set()
