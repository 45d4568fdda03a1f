"""The web inbox's test kit: an approver with a real SSH key, `patch-tui web` in a subprocess on
a loopback port, and a real browser (Debian's chromium, driven by Playwright over CDP) holding a
virtual authenticator (Chrome's WebAuthn.addVirtualAuthenticator) as the person's phone.

Browser tests skip with one line when there is no chromium or no playwright; `.ci/run` installs
chromium. Screenshots go to tests/artifacts/web/ (kept by CI as artifacts, ignored by git).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.runtimekit import PATCH_TUI, cli

CHROMIUM = os.environ.get("PATCH_TUI_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "web"


def browser_missing() -> str | None:
    """Why browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"no browser at {CHROMIUM}: apt-get install chromium to run the web inbox's browser tests"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: `make test` installs it"
    return None


needs_browser = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ssh_key(folder: Path, name: str) -> tuple[Path, str]:
    """A fresh ed25519 key pair (no passphrase): the private key's path and the public line."""
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / f"id_{name}"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@test", "-f", str(key)],
        check=True,
        capture_output=True,
    )
    return key, (folder / f"id_{name}.pub").read_text().strip()


@dataclass
class WebServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    approvers: Path
    env: dict[str, str]
    keys: dict[str, Path] = field(default_factory=dict)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def write_approvers(path: Path, approvers: list[tuple[str, str]], extra: str = "") -> None:
    lines = []
    for name, key in approvers:
        lines += ["[[approver]]", f'name = "{name}"', f'key = "{key}"', 'tools = ["*"]', ""]
    path.write_text("\n".join(lines) + extra)
    path.chmod(0o600)


@contextmanager
def web_server(
    env: dict[str, str],
    approvers: Path,
    *,
    store: Path | str,
    options: tuple[str, ...] = (),
    port: int | None = None,
) -> Iterator[WebServer]:
    """`patch-tui web` on a free loopback port (or `port`: the same address again, after a
    restart), addressed as http://localhost:PORT."""
    port = port or free_port()
    log = approvers.parent / f"web-{port}.log"
    process = subprocess.Popen(
        [
            *PATCH_TUI,
            "web",
            "--listen",
            f"127.0.0.1:{port}",
            "--store",
            str(store),
            "--approvers",
            str(approvers),
            *options,
        ],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    server = WebServer(f"http://localhost:{port}", process, log, approvers, env)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise AssertionError(f"patch-tui web exited: {server.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"patch-tui web never listened: {server.log_text()}"
                    ) from None
                time.sleep(0.05)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def enroll_link(server: WebServer, name: str, key: Path) -> str:
    """`keys enroll-web NAME` in a terminal whose approver key is `key`."""
    r = cli(
        {**server.env, "PATCH_TUI_APPROVER_KEY": str(key)},
        "keys",
        "enroll-web",
        name,
        "--url",
        server.url,
        "--approvers",
        str(server.approvers),
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Phone:
    """A browser page with its own virtual authenticator (user verification: Face ID says yes)."""

    def __init__(self, browser: Any, *, width: int = 375, height: int = 667) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable")
        self.authenticator = self.cdp.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                    "automaticPresenceSimulation": True,
                }
            },
        )["authenticatorId"]

    def credentials(self) -> list[dict[str, Any]]:
        answer = self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})
        return list(answer["credentials"])

    def enroll(self, link: str) -> None:
        self.page.goto(link)
        self.page.get_by_role("button", name="Register a passkey").click()
        self.page.wait_for_url(link.split("/enroll")[0] + "/")

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / name
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()


def copy_to_docs(shot: Path, name: str) -> None:
    """Refreshes the docs' screenshot (docs/guide/img/) from the test that takes it, when asked
    (PATCH_TUI_DOCS_SCREENSHOTS=1): the page shows times and paths, so an ordinary run would
    change the tracked image every time."""
    if os.environ.get("PATCH_TUI_DOCS_SCREENSHOTS") != "1":
        return
    target = Path(__file__).resolve().parent.parent / "docs" / "guide" / "img" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, target)
