"""The pipes of a warm call (runtime/warm.py): its stdin written, its stdout and stderr read up
to their caps, its exit status read from the warm process, within the call's timeout."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from patch_tui.runtime.process import STDERR_CAP, STDOUT_CAP, cancel_requested

if TYPE_CHECKING:
    from patch_tui.runtime.warm import WarmProcess

PIPE_ROOM = 65536  # what an empty pipe takes without blocking (Linux)


def feed_stdin(fd: int, data: bytes) -> threading.Thread | None:
    """The call's stdin: written here when it fits in the empty pipe, else by a thread."""
    if len(data) < PIPE_ROOM:
        with contextlib.suppress(OSError):
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        os.close(fd)
        return None
    feeder = threading.Thread(target=_feed, args=(fd, data), daemon=True)
    feeder.start()
    return feeder


def _feed(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError), os.fdopen(fd, "wb") as pipe:
        pipe.write(data)


def rss(wp: WarmProcess) -> int:
    """The warm process's memory, as the sandbox's processes' resident size (its main one
    after a call: the others were killed)."""
    total = 0
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{wp.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def watch(
    wp: WarmProcess, out_r: int, err_r: int, timeout: float, started: float
) -> tuple[bytes, bytes, int | None, bool, str | None]:
    """stdout, stderr, the exit status (None: stopped or died), timed out, which cap."""
    bufs = {out_r: bytearray(), err_r: bytearray()}
    caps = {out_r: STDOUT_CAP, err_r: STDERR_CAP}
    names = {out_r: "stdout", err_r: "stderr"}
    control = wp.control.fileno()
    sel = selectors.DefaultSelector()
    for fd in (out_r, err_r):
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    sel.register(control, selectors.EVENT_READ)
    deadline = started + timeout
    status: int | None = None
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                return bytes(bufs[out_r]), bytes(bufs[err_r]), None, True, None
            if cancel_requested():
                return bytes(bufs[out_r]), bytes(bufs[err_r]), None, False, None
            for key, _ in sel.select(min(deadline - now, 0.25)):
                fd = int(key.fd)
                if fd == control:
                    reply = wp.control.recv(4096)
                    sel.unregister(control)
                    if not reply:  # the warm process died
                        return bytes(bufs[out_r]), bytes(bufs[err_r]), None, False, None
                    status = int(json.loads(reply)["exit"])
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(fd)
                    continue
                buf = bufs[fd]
                room = caps[fd] - len(buf)
                buf += chunk[: max(room, 0)]
                if len(chunk) > room:
                    return bytes(bufs[out_r]), bytes(bufs[err_r]), None, False, names[fd]
            # Done: the exit status is in, and every process of the call is gone (the warm
            # process killed them before answering), so both pipes are at their end.
            if status is not None and not sel.get_map():
                return bytes(bufs[out_r]), bytes(bufs[err_r]), status, False, None
    finally:
        sel.close()
        for fd in (out_r, err_r):
            with contextlib.suppress(OSError):
                os.close(fd)
