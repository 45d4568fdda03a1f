"""Alerts when an action arrives: the bell, and a desktop notification, as the settings say.

    Alerter(app).arrived(actions)      called by the pending watch with the newly held actions

The bell and the OSC sequences go through the app's driver, the one writer of the terminal, so
they never land in the middle of a frame. `notify-send` runs in a thread worker: it can take a
moment when the notification daemon is slow, and the UI thread never waits. What each shows is
built by approvals/alerts.py from safe text only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from textual.app import App

from patch_tui.approvals import alerts
from patch_tui.ui.services import maybe_services


class Alerter:
    def __init__(self, app: App[Any]) -> None:
        self.app = app

    def _setting(self, name: str) -> bool:
        svc = maybe_services(self.app)
        settings = svc.settings if svc is not None else None
        try:
            return bool(getattr(settings, name, True))
        except Exception:  # an unreadable config never stops the alert: the defaults are on
            return True

    def _write(self, text: str) -> None:
        driver = self.app._driver
        if driver is not None:
            driver.write(text)

    def arrived(self, actions: Sequence[Any]) -> None:
        if not actions:
            return
        if self._setting("alert_bell"):
            self._write("\a")
        title, body = alerts.notification(actions)
        mode = alerts.osc_mode(self._setting("alert_osc"), os.environ)
        for sequence in alerts.osc_sequences(title, body, mode):
            self._write(sequence)
        if self._setting("alert_notify_send"):
            argv = alerts.notify_send_argv(title, body)
            if argv is not None:
                self.app.run_worker(
                    lambda: alerts.send_notify(argv),
                    thread=True,
                    group="alerts",
                    exit_on_error=False,
                    name="notify-send",
                )
