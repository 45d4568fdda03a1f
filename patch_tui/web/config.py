"""Where the web app listens, what it calls itself, and when it refuses to start.

A WebAuthn relying party is a host name, never an IP address, so the app is addressed as
`http://localhost:8765` by default (its RP ID `localhost`), or by the `--public-url` a reverse
proxy or Tailscale Serve gives it (its RP ID that URL's host). A passkey registered for one RP ID
works only there: the URL is part of what the approvers file records.

The refusal: a listening socket beyond loopback without TLS would carry session cookies and the
pages of pending actions in clear, so `--listen` on a non-loopback address needs either
`--tls-cert`/`--tls-key` (uvicorn serves HTTPS) or `--behind-proxy` (a TLS-terminating proxy in
front, declared, with an https:// `--public-url`).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from patch_tui.settings.store_location import StoreLocation

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_URL = f"http://localhost:{DEFAULT_PORT}"
# Sessions end after this long without a request (seconds): a phone left unlocked on a table.
IDLE_TIMEOUT = 10 * 60


class WebConfigError(Exception):
    """A configuration the web app refuses; the message is one line for a person."""


@dataclass(frozen=True)
class WebConfig:
    host: str
    port: int
    public_url: str  # the origin people open, e.g. "http://localhost:8765"
    store: StoreLocation  # a SQLite file, or a PostgreSQL URL (the team inbox)
    approvers_file: Path
    tls_cert: Path | None = None
    tls_key: Path | None = None
    behind_proxy: bool = False
    idle_timeout: float = IDLE_TIMEOUT
    # Poll the store this often for the live list (seconds).
    poll_interval: float = 0.2
    # How long an approval made here stays usable (the `confirm_ttl` setting, as everywhere).
    ttl: float = 300.0

    @property
    def origin(self) -> str:
        parts = urllib.parse.urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def rp_id(self) -> str:
        return urllib.parse.urlsplit(self.public_url).hostname or "localhost"

    @property
    def secure_origin(self) -> bool:
        return self.origin.startswith("https://")


def parse_listen(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[v6]:PORT` or `:PORT` -> (host, port)."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        raise WebConfigError(f"--listen {text!r}: expected HOST:PORT, like 127.0.0.1:8765")
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise WebConfigError(f"--listen {text!r}: the port must be a number") from None
    if not 0 <= port <= 65535:
        raise WebConfigError(f"--listen {text!r}: the port must be 0 to 65535")
    return host, port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check(config: WebConfig) -> None:
    """Raises WebConfigError for a configuration that would expose the app or break passkeys."""
    parts = urllib.parse.urlsplit(config.public_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebConfigError(f"--public-url {config.public_url!r}: expected http(s)://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise WebConfigError(
            f"--public-url {config.public_url!r}: the app must be served at the root of its host"
        )
    try:
        ipaddress.ip_address(parts.hostname)
    except ValueError:
        pass
    else:
        raise WebConfigError(
            f"--public-url {config.public_url!r}: passkeys need a host name, not an IP address "
            "(use http://localhost:PORT, or the proxy's or Tailscale's name)"
        )
    if parts.scheme == "http" and parts.hostname != "localhost":
        raise WebConfigError(
            f"--public-url {config.public_url!r}: a browser allows passkeys over http only on "
            "localhost; give the https:// URL of the TLS proxy or Tailscale Serve"
        )
    if (config.tls_cert is None) != (config.tls_key is None):
        raise WebConfigError("--tls-cert and --tls-key go together")
    if is_loopback(config.host):
        return
    if config.tls_cert is not None:
        return
    if config.behind_proxy and parts.scheme == "https":
        return
    raise WebConfigError(
        f"refusing to listen on {config.host}:{config.port} without TLS: pages and session "
        "cookies would cross the network in clear. Listen on 127.0.0.1 and put a TLS proxy or "
        "Tailscale Serve in front (--behind-proxy --public-url https://...), or pass "
        "--tls-cert and --tls-key"
    )
