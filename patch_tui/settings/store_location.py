"""Where the confirmation store is: a file (SQLite, the embedded default) or a PostgreSQL URL.

    store_location(explicit=None) -> Path | DatabaseURL
        `--store`, then PATCH_TUI_STORE, then `store = "..."` in the config, then the file in
        the user state folder. A `postgresql://` (or `postgres://`) URL is a DatabaseURL; any
        other `scheme://` is refused (StoreLocationError, one line); anything else is a path.

A DatabaseURL carries credentials (a password in the URL, or none when they come from
PGPASSFILE or PGPASSWORD). Its `str()` and `repr()` are the redacted form (`redact_url`): the
user, host, port and database stay, the password and every query parameter's value that could
be a secret are replaced by `***`; only `.secret_url` (for the driver) holds the real text. So
an error message, a log line, the TUI's status bar or a traceback that formats the location
never shows the password.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

DB_SCHEMES = ("postgresql", "postgres")
# Query parameters whose value is a secret or points at one's content (libpq's names).
_SECRET_PARAMS = {"password", "sslpassword", "passfile"}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class StoreLocationError(ValueError):
    """A store location that is neither a path nor a URL we can open; the message is one line."""


@dataclass(frozen=True)
class DatabaseURL:
    """A PostgreSQL store's URL. Printing it never prints its password."""

    secret_url: str = field(repr=False)

    def __str__(self) -> str:
        return redact_url(self.secret_url)

    def __repr__(self) -> str:
        return f"DatabaseURL({redact_url(self.secret_url)!r})"


StoreLocation = Path | DatabaseURL


def is_database_url(text: str) -> bool:
    found = _SCHEME.match(text)
    return found is not None and found.group(1).lower() in DB_SCHEMES


def redact_url(url: str) -> str:
    """The URL with its password and secret parameters replaced by `***`. Unparseable text
    keeps only its scheme: nothing that might be a secret is shown."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}{':***' if ':' in userinfo else ''}@{hostport}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode(
                [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="/*"
            )
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        found = _SCHEME.match(url)
        return f"{found.group(1) if found else 'postgresql'}://***"


def parse_location(text: str) -> StoreLocation:
    found = _SCHEME.match(text)
    if found is None:
        return Path(text).expanduser()
    if found.group(1).lower() in DB_SCHEMES:
        return DatabaseURL(text)
    raise StoreLocationError(
        f"the store {found.group(1)}://… is not a file path or a postgresql:// URL "
        "(the confirmation store is SQLite at a path, or PostgreSQL)"
    )


def as_location(value: str | os.PathLike[str] | DatabaseURL) -> StoreLocation:
    """A location from what a caller holds: a DatabaseURL as is, text or a path parsed."""
    if isinstance(value, DatabaseURL):
        return value
    return parse_location(os.fspath(value))


def store_location(explicit: str | os.PathLike[str] | None = None) -> StoreLocation:
    """The store to open: `--store`, PATCH_TUI_STORE, the config's `store`, the default file."""
    from patch_tui.settings import paths

    if explicit:
        return parse_location(os.fspath(explicit))
    env = os.environ.get("PATCH_TUI_STORE")
    if env:
        return parse_location(env)
    from patch_tui.settings.config import plain_setting

    configured = plain_setting("store", None)
    if isinstance(configured, str) and configured:
        return parse_location(configured)
    return paths.default_store()
