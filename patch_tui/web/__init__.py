"""The approvals web app (`patch-tui web`): a thin front end over the same store and decision
service as the TUI, server-rendered for a phone, each decision signed with the approver's passkey.

    config     where it listens and who it is (origin, RP ID), and the refusal to listen in the
               open without TLS
    sessions   server-side sessions, CSRF tokens, pending ceremonies, rate limits
    display    untrusted text for a page: the one display rule plus its flags
    live       the store watcher behind the live list (server-sent events) and push alerts
    app        the Starlette routes; templates/ and static/ hold the pages, the CSS and the JS
    server     runs it on uvicorn

Its web stack (starlette, uvicorn, jinja2, webauthn) is the `patch-tui[web]` extra, imported only
when `patch-tui web` runs. docs/guide/web.md says how to use it, docs/architecture.md why it is
built this way.
"""
