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


def approvers_path(args: argparse.Namespace) -> Path:
    """`--approvers`, then PATCH_TUI_APPROVERS_FILE, then approvers.toml in the config folder."""
    explicit = getattr(args, "approvers", None) or os.environ.get("PATCH_TUI_APPROVERS_FILE")
    if explicit:
        return Path(explicit).expanduser()
    from patch_tui.settings.paths import config_dir

    return config_dir() / "approvers.toml"


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
    from patch_tui.settings import paths
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
            store=paths.default_store(getattr(args, "store", None)),
            approvers_file=approvers_path(args),
            tls_cert=Path(args.tls_cert) if args.tls_cert else None,
            tls_key=Path(args.tls_key) if args.tls_key else None,
            behind_proxy=args.behind_proxy,
            ttl=_settings_ttl() or DEFAULT_TTL,
        )
        check(config)
    except WebConfigError as exc:
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


def run_keys(args: argparse.Namespace) -> int:
    if args.keys_command != "enroll-web":
        _err("usage: patch-tui keys enroll-web NAME [--url URL]")
        return EXIT_USAGE
    from patch_tui.approvals.enrollment import ENROLL_TTL, EnrollError, approver_key, make_link

    file = approvers_path(args)
    identity = Path(args.identity).expanduser() if args.identity else _default_identity()
    try:
        key_line = approver_key(file, args.name)
        link = make_link(args.name, key_line, identity, args.url)
    except EnrollError as exc:
        _err(str(exc))
        return EXIT_FAILED
    minutes = int(ENROLL_TTL // 60)
    print(link)
    print(
        f"patch-tui: open this link on the device that will hold {args.name}'s passkey, within "
        f"{minutes} minutes; it works once. Anyone holding it meanwhile could register as "
        f"{args.name}: do not paste it into a chat.",
        file=sys.stderr,
    )
    return EXIT_OK


def _default_identity() -> Path:
    home = Path.home() / ".ssh"
    for name in ("id_ed25519", "id_ed25519_sk", "id_ecdsa"):
        if (home / name).exists() or (home / f"{name}.pub").exists():
            return home / name
    return home / "id_ed25519"
