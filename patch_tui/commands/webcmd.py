"""`patch-tui web` (the approvals web app) and `patch-tui keys enroll-web` (a one-time link that
registers an approver's passkey in it).

Exit codes: web 0 stopped, 1 cannot start (the store, the port), 2 usage (a refused
configuration, a missing extra); keys enroll-web 0 link printed, 1 cannot sign it, 2 usage.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
WEB_MODULES = ("starlette", "uvicorn", "jinja2", "webauthn", "multipart")


def _err(message: str) -> None:
    print(f"patch-tui: {message}", file=sys.stderr)


def use_approvers_file(args: argparse.Namespace) -> None:
    """`--approvers FILE` is the `approvers_file` setting for this process (and what it reads
    through approvals/identity.trusted(), like every other command)."""
    explicit = getattr(args, "approvers", None)
    if explicit:
        os.environ["PATCH_TUI_APPROVERS_FILE"] = str(Path(explicit).expanduser())


def missing_web_extra() -> str | None:
    missing = [m for m in WEB_MODULES if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return (
        f"`patch-tui web` needs the web extra ({', '.join(missing)} missing): "
        "pip install 'patch-tui[web]'"
    )


def run_web(args: argparse.Namespace) -> int:
    problem = missing_web_extra()
    if problem is not None:
        _err(problem)
        return EXIT_USAGE
    from patch_tui.approvals.values import DEFAULT_TTL
    from patch_tui.commands.runtime import _settings_ttl
    from patch_tui.settings.store_location import StoreLocationError, store_location
    from patch_tui.web.config import DEFAULT_URL, WebConfig, WebConfigError, check, parse_listen

    try:
        host, port = parse_listen(args.listen)
        public_url = args.public_url or (
            DEFAULT_URL if port == 8765 else f"http://localhost:{port}"
        )
        config = WebConfig(
            host=host,
            port=port,
            public_url=public_url,
            store=store_location(getattr(args, "store", None)),
            approvers_file=_approvers_file(args),
            tls_cert=Path(args.tls_cert) if args.tls_cert else None,
            tls_key=Path(args.tls_key) if args.tls_key else None,
            behind_proxy=args.behind_proxy,
            ttl=_settings_ttl() or DEFAULT_TTL,
        )
        check(config)
    except (WebConfigError, StoreLocationError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    from patch_tui.web.server import serve

    print(f"patch-tui web: open {config.origin} (listening on {host}:{port})", file=sys.stderr)
    try:
        serve(config)
    except OSError as exc:
        _err(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _approvers_file(args: argparse.Namespace) -> Path:
    """The approvers file in force (approvals/approvers.py says which), or where one would be."""
    use_approvers_file(args)
    from patch_tui.approvals.approvers import FILE_NAME, approvers_path
    from patch_tui.settings.config import plain_setting
    from patch_tui.settings.paths import config_file

    found = approvers_path(plain_setting("approvers_file", None))
    return found if found is not None else config_file().parent / FILE_NAME


def run_enroll_web(args: argparse.Namespace) -> int:
    """`keys enroll-web NAME`: the one-time link, signed with this terminal's approver key."""
    from patch_tui.approvals.enrollment import ENROLL_TTL, EnrollError, make_link
    from patch_tui.approvals.identity import DecisionRefused, signer_here, trusted
    from patch_tui.untrusted.text_safety import visible

    use_approvers_file(args)
    try:
        link = make_link(args.name, signer_here(), trusted(), args.url)
    except (EnrollError, DecisionRefused) as exc:
        _err(visible(str(exc)))
        return EXIT_FAILED
    minutes = int(ENROLL_TTL // 60)
    print(link)
    print(
        f"patch-tui: open this link on the device that will hold {visible(args.name)}'s "
        f"passkey, within {minutes} minutes; it works once. Anyone holding it meanwhile could "
        "register as you: do not paste it into a chat.",
        file=sys.stderr,
    )
    return EXIT_OK
