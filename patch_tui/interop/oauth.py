"""external_auth labels (`provider.scope`) <-> the OAuth providers and scopes Arcade, spec 1.0 and
Shinkai name; one table, read both ways."""

from __future__ import annotations

import re
from typing import Any

from patch_tui.format.manifest import AUTH_SCOPE_RE, Manifest
from patch_tui.interop.common import LossReport

# --- external_auth <-> OAuth ---------------------------------------------------------------------

# Patch provider -> OAuth provider id (as Arcade and spec 1.0 name them).
OAUTH_PROVIDER: dict[str, str] = {
    "gmail": "google",
    "google_calendar": "google",
    "slack": "slack",
    "github": "github",
    "linear": "linear",
}
PROVIDER_TITLES: dict[str, str] = {
    "google": "Google",
    "slack": "Slack",
    "github": "GitHub",
    "linear": "Linear",
}
_GOOGLE = "https://www.googleapis.com/auth/"
# Patch scope labels <-> real OAuth scopes, both ways (a bijection: keep it one).
KNOWN_SCOPES: dict[str, tuple[str, str]] = {
    "gmail.read": ("google", _GOOGLE + "gmail.readonly"),
    "gmail.send": ("google", _GOOGLE + "gmail.send"),
    "gmail.compose": ("google", _GOOGLE + "gmail.compose"),
    "gmail.modify": ("google", _GOOGLE + "gmail.modify"),
    "gmail.labels": ("google", _GOOGLE + "gmail.labels"),
    "google_calendar.read": ("google", _GOOGLE + "calendar.readonly"),
    "google_calendar.events": ("google", _GOOGLE + "calendar.events"),
    "google_calendar.write": ("google", _GOOGLE + "calendar"),
    "slack.send_message": ("slack", "chat:write"),
    "slack.read_channels": ("slack", "channels:read"),
    "slack.read_history": ("slack", "channels:history"),
    "slack.read_users": ("slack", "users:read"),
    "github.read_user": ("github", "read:user"),
    "linear.create_issues": ("linear", "issues:create"),
}
_SCOPE_LABEL: dict[tuple[str, str], str] = {v: k for k, v in KNOWN_SCOPES.items()}
# OAuth providers by any name a definition may use for them.
_PROVIDER_ALIASES: dict[str, str] = {
    "google": "google",
    "gmail": "google",
    "google_calendar": "google",
    "googlecalendar": "google",
    "slack": "slack",
    "github": "github",
    "linear": "linear",
}
_SCOPE_PART_RE = re.compile(r"^[a-z][a-z0-9_.]*$")


def oauth_scope(label: str) -> tuple[str, str] | None:
    """An external_auth label as (OAuth provider id, scope); None when it is not provider.scope."""
    if label in KNOWN_SCOPES:
        return KNOWN_SCOPES[label]
    m = AUTH_SCOPE_RE.match(label)
    if not m or m[1] not in OAUTH_PROVIDER:
        return None
    provider, scope = m[1], m[2]
    if provider == "gmail":
        return "google", _GOOGLE + "gmail." + scope
    if provider == "google_calendar":
        return "google", _GOOGLE + "calendar." + scope
    return OAUTH_PROVIDER[provider], scope


def oauth_requirements(manifest: Manifest) -> dict[str, list[str]]:
    """external_auth grouped by OAuth provider, in order: {"google": [scope, ...], ...}."""
    out: dict[str, list[str]] = {}
    for label in manifest.external_auth:
        pair = oauth_scope(label)
        if pair is None:
            continue
        scopes = out.setdefault(pair[0], [])
        if pair[1] not in scopes:
            scopes.append(pair[1])
    return out


def provider_id(name: Any) -> str | None:
    """The OAuth provider id for a foreign provider name (`Google`, `gmail`, `GitHub`), or None."""
    if not isinstance(name, str):
        return None
    return _PROVIDER_ALIASES.get(re.sub(r"[^a-z_]", "", name.lower()))


def labels_from_scopes(provider: Any, scopes: Any, *, where: str, report: LossReport) -> list[str]:
    """external_auth labels from one OAuth provider and its scopes; what has no Patch label is
    reported."""
    pid = provider_id(provider)
    if pid is None:
        report.add(
            where,
            f"provider `{provider}` is not one Patch supports (gmail, google_calendar, slack, github, linear): not kept",
        )
        return []
    if not isinstance(scopes, list) or not scopes:
        report.add(
            where,
            f"provider `{provider}` without scopes: Patch needs provider.scope labels, not kept",
        )
        return []
    labels: list[str] = []
    for scope in scopes:
        label = _label_for(pid, str(scope))
        if label is None:
            report.add(f"{where}.scopes", f"scope `{scope}` has no Patch label: not kept")
        elif label not in labels:
            labels.append(label)
    return labels


def _label_for(pid: str, scope: str) -> str | None:
    if (pid, scope) in _SCOPE_LABEL:
        return _SCOPE_LABEL[(pid, scope)]
    if pid == "google":
        for prefix, patch_provider in (("gmail.", "gmail"), ("calendar.", "google_calendar")):
            rest = scope.removeprefix(_GOOGLE)
            if (
                rest != scope
                and rest.startswith(prefix)
                and _SCOPE_PART_RE.match(rest[len(prefix) :])
            ):
                return f"{patch_provider}.{rest[len(prefix) :]}"
        return None
    if _SCOPE_PART_RE.match(scope):
        return f"{pid}.{scope}"
    return None
