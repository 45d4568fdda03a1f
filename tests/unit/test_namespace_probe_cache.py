"""`run` is a new process each time: the namespace probe (an `unshare` spawn) is remembered
across processes, but only its success, only under the same boot, user, unshare and kernel
settings, and only in the cache folder (which every run's sandbox keeps read-only)."""

from __future__ import annotations

import shutil
import sys

import pytest

from patch_tui.runtime import process

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("unshare") is None,
    reason="the namespace probe is Linux's unshare",
)


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    process._NS_CACHE.clear()
    yield tmp_path
    process._NS_CACHE.clear()


def _spawns(monkeypatch, works: bool) -> list[list[str]]:
    calls: list[list[str]] = []

    def probe(args: list[str]) -> bool:
        calls.append(args)
        return works

    monkeypatch.setattr(process, "_probe", probe)
    return calls


def test_a_success_is_remembered_for_the_next_process(fresh, monkeypatch) -> None:
    first = _spawns(monkeypatch, works=True)
    assert process.namespace_support()["pid_net"] is True
    assert first  # probed
    process._NS_CACHE.clear()  # as a new process finds it
    second = _spawns(monkeypatch, works=False)
    assert process.namespace_support() == {"pid_net": True, "pid": True, "net": True}
    assert second == []  # no spawn


def test_a_failure_is_probed_again_every_time(fresh, monkeypatch) -> None:
    _spawns(monkeypatch, works=False)
    assert process.namespace_support()["pid_net"] is False
    process._NS_CACHE.clear()
    again = _spawns(monkeypatch, works=True)
    assert process.namespace_support()["pid_net"] is True
    assert again  # probed, not read from a remembered failure


def test_another_boot_or_kernel_setting_probes_again(fresh, monkeypatch) -> None:
    _spawns(monkeypatch, works=True)
    process.namespace_support()
    process._NS_CACHE.clear()
    monkeypatch.setattr(process, "_probe_key", lambda unshare: "another boot")
    later = _spawns(monkeypatch, works=False)
    assert process.namespace_support()["pid_net"] is False
    assert later
