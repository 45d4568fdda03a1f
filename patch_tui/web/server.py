"""Runs the web app on uvicorn, after the configuration was checked (web/config.py)."""

from __future__ import annotations

import logging

from patch_tui.web.app import create_app
from patch_tui.web.config import WebConfig, check


def serve(config: WebConfig) -> None:
    import uvicorn

    check(config)
    logging.basicConfig(level=logging.INFO, format="patch-tui web: %(message)s")
    uvicorn.run(
        create_app(config),
        host=config.host,
        port=config.port,
        ssl_certfile=str(config.tls_cert) if config.tls_cert else None,
        ssl_keyfile=str(config.tls_key) if config.tls_key else None,
        # Behind a declared TLS proxy, trust its X-Forwarded-* from loopback only.
        proxy_headers=config.behind_proxy,
        forwarded_allow_ips="127.0.0.1,::1" if config.behind_proxy else None,
        server_header=False,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
