"""The runner: the Patch runtime's contract, and isolation that is real on this host."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from patch_tui.runtime.runner import (
    STDOUT_CAP,
    ensure_venv,
    namespace_support,
    run_file,
    run_source,
    venv_key,
)
from tests.pkgindex import PackageIndex
from tests.runtimekit import tool_text, write_tool

NS = namespace_support()
AUDIT_KEYS = {
    "schema_version",
    "run_id",
    "ran_at",
    "tool",
    "sandbox",
    "inputs",
    "output",
    "stdout_sha256",
    "stderr_sha256",
    "exit_code",
    "duration_ms",
    "capability_assertions",
}


def test_host_namespaces_probe_matches_unshare() -> None:
    # This machine allows user namespaces (`unshare -rn true` works): every isolation test below
    # must then run for real, not fall back.
    import subprocess

    works = subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    assert NS["net"] == works


def test_run_ok_with_audit_record(tmp_path: Path) -> None:
    path = write_tool(
        tmp_path / "tools",
        "greet",
        'def main(name: str) -> dict:\n    return {"hi": name}',
        inputs=[{"name": "name"}],
    )
    runs = tmp_path / "runs"
    r = run_file(path, {"name": "Ada"}, runs_dir=runs)
    assert r.ok and r.result == {"hi": "Ada"} and r.error is None and r.exit_code == 0
    assert r.output_type_error is None
    record = json.loads(r.audit_path.read_text())
    assert AUDIT_KEYS <= set(record)
    assert record["schema_version"] == "1" and record["run_id"] == r.run_id
    assert record["tool"] == {"name": "greet", "version": "1.0.0", "source_sha256": r.source_sha256}
    assert set(record["sandbox"]) >= {
        "capabilities",
        "packages_installed",
        "allow_internet_access",
        "envs_keys",
    }
    assert record["inputs"] == {"name": "Ada"} and record["output"] == {"hi": "Ada"}
    stdout_blob = runs / "blobs" / f"{record['stdout_sha256']}.txt"
    assert json.loads(stdout_blob.read_text()) == {"hi": "Ada"}


def test_source_text_runs_unsaved(tmp_path: Path) -> None:
    text = tool_text(
        "adder",
        "def main(a: int, b: int) -> int:\n    return a + b",
        inputs=[{"name": "a", "type": "integer"}, {"name": "b", "type": "integer"}],
        output_type="integer",
    )
    r = run_source(text, {"a": 2, "b": 3})
    assert r.ok and r.result == 5 and r.audit_path is None


def test_failures_are_explained_and_audited(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    crash = tool_text("crash", 'def main() -> dict:\n    raise ValueError("boom here")')
    r = run_source(crash, {}, runs_dir=runs)
    assert not r.ok and "exited with code 1" in r.error and "boom here" in r.error
    assert json.loads(r.audit_path.read_text())["exit_code"] == 1
    no_json = tool_text("nojson", "def main() -> dict:\n    return {}").replace(
        "print(json.dumps(main(**args)))", 'print("not json")'
    )
    r = run_source(no_json, {})
    assert not r.ok and "not JSON" in r.error
    r = run_source("print('no manifest')\n", {})
    assert not r.ok and "manifest" in r.error
    wrong = tool_text("wrong", 'def main() -> list:\n    return [1, "two"]', output_type="array")
    r = run_source(wrong.replace("#   type: array", "#   type: array\n#   items: integer"), {})
    assert r.ok and r.output_type_error == "outputs.items is integer, but element 1 is string"
    r = run_source(tool_text("t", "def main():\n    return 'x'"), {})
    assert r.ok and r.output_type_error == "outputs.type is object, but the tool returned string"


def test_grandchild_holding_stdout_cannot_hang_the_run(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild-alive"
    body = f"""
def main() -> dict:
    import subprocess
    # Escapes the process group and keeps our stdout open, then writes a marker if still alive.
    subprocess.Popen(["sh", "-c", "sleep 1.5; echo alive > {marker}"], start_new_session=True)
    return {{"done": True}}
"""
    started = time.monotonic()
    r = run_source(tool_text("leaver", body), {}, timeout=20)
    assert r.ok and r.result == {"done": True}
    assert time.monotonic() - started < 5
    hanger = body.replace('return {"done": True}', "import time\n    time.sleep(30)")
    started = time.monotonic()
    r = run_source(tool_text("hanger", hanger), {}, timeout=1)
    assert not r.ok and r.timed_out and "longer than 1 s" in r.error
    assert time.monotonic() - started < 5
    time.sleep(2)
    if NS["pid"]:  # the namespace's death took every process of the run with it
        assert not marker.exists()


def test_output_flood_is_capped(tmp_path: Path) -> None:
    body = 'def main() -> dict:\n    while True:\n        sys.stdout.write("x" * 65536)'
    started = time.monotonic()
    r = run_source(tool_text("flood", body), {}, timeout=30)
    assert not r.ok and r.output_capped == "stdout" and "more than 4 MiB" in r.error
    assert len(r.stdout) == STDOUT_CAP
    assert time.monotonic() - started < 10


@pytest.fixture
def tcp_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.sendall(b"hello\n")
            conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join()
    srv.close()


NET_BODY = """
def main(port: int) -> dict:
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            return {"reached": s.recv(10).decode()}
    except OSError as exc:
        return {"blocked": str(exc)}
"""


def test_network_false_is_blocked_where_namespaces_exist(tcp_server: int) -> None:
    inputs = [{"name": "port", "type": "integer"}]
    allowed = run_source(
        tool_text("net_ok", NET_BODY, inputs=inputs, network=True), {"port": tcp_server}
    )
    assert allowed.ok and allowed.result == {"reached": "hello\n"}  # the server really answers
    assert allowed.enforced["network"].startswith("allowed")
    r = run_source(tool_text("net_no", NET_BODY, inputs=inputs), {"port": tcp_server})
    assert r.ok
    if NS["net"]:
        assert "blocked" in r.result
        assert r.enforced["network"].startswith("blocked (netns")
        assert any("enforced with a network namespace" in a for a in r.capability_assertions)
    else:
        assert r.enforced["network"].startswith("NOT enforced")


SPY_BODY = """
def main(parent: int) -> dict:
    import glob, os
    seen = []
    for env_file in glob.glob("/proc/[0-9]*/environ") + [f"/proc/{parent}/environ"]:
        try:
            with open(env_file, "rb") as fh:
                if b"ANTHROPIC_API_KEY" in fh.read():
                    seen.append(env_file)
        except OSError:
            pass
    return {"env_key": os.environ.get("ANTHROPIC_API_KEY"), "env": sorted(os.environ),
            "found_in_proc": seen}
"""


def test_secrets_are_out_of_reach(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-secret")
    monkeypatch.setenv("PATCH_ACCESS_TOKEN", "tok-123")
    r = run_source(
        tool_text("spy", SPY_BODY, inputs=[{"name": "parent", "type": "integer"}]),
        {"parent": os.getpid()},
    )
    assert r.ok
    assert r.result["env_key"] is None
    assert r.result["env"] == [
        "HOME",
        "LANG",
        "PATH",
        "PWD",
        "TMPDIR",
    ]  # no PATCH_ACCESS_TOKEN either
    if NS["pid"]:
        assert r.enforced["pid_namespace"] is True
        assert r.result["found_in_proc"] == []  # not even through the parent's /proc entry


def test_access_token_only_with_external_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATCH_ACCESS_TOKEN", "tok-123")
    body = 'def main() -> dict:\n    import os\n    return {"token": os.environ.get("PATCH_ACCESS_TOKEN")}'
    text = tool_text("authy", body).replace(
        "# ---\nimport json", "# external_auth:\n#   - gmail.read\n# ---\nimport json"
    )
    r = run_source(text, {})
    assert r.ok and r.result == {"token": "tok-123"}


def test_resource_limits_apply() -> None:
    body = """
def main() -> dict:
    import resource
    return {k: resource.getrlimit(getattr(resource, k))[0]
            for k in ("RLIMIT_CORE", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_CPU")}
"""
    r = run_source(tool_text("limits", body), {}, timeout=5)
    assert r.ok
    assert r.result["RLIMIT_CORE"] == 0
    assert r.result["RLIMIT_AS"] == 4 << 30
    assert r.result["RLIMIT_FSIZE"] == 256 << 20
    assert r.result["RLIMIT_CPU"] == 6


def test_tool_sees_only_the_standard_library() -> None:
    body = 'def main() -> dict:\n    import importlib.util\n    return {"pydantic": importlib.util.find_spec("pydantic") is not None}'
    r = run_source(tool_text("stdlib", body), {})
    assert r.ok and r.result == {"pydantic": False}


def test_packages_need_install_permission(tmp_path: Path) -> None:
    text = tool_text("needs_pkg", "def main() -> dict:\n    return {}", packages=["six==1.17.0"])
    r = run_source(
        text, {}, allow_install=False, venv_root=tmp_path / "venvs", runs_dir=tmp_path / "runs"
    )
    assert not r.ok and "--no-install" in r.error and "six==1.17.0" in r.error
    assert r.audit_path is not None and r.audit_path.exists()  # refusals are audited too
    assert venv_key(["b==1", "a==2"]) == venv_key(["a==2", "b==1"])
    assert venv_key(["a==2"]) != venv_key(["a==3"])


def test_pinned_packages_install_into_a_cached_venv(tmp_path: Path, monkeypatch) -> None:
    # A package index on 127.0.0.1 holding one wheel: the tests never touch the network.
    with PackageIndex(tmp_path / "index") as index:
        index.add_wheel("patchdemo", "1.2.3", {"patchdemo.py": "__version__ = '1.2.3'\n"})
        monkeypatch.setenv("PATCH_TUI_PACKAGES_INDEX_URL", index.url)
        root = tmp_path / "venvs"
        body = 'def main() -> dict:\n    import patchdemo\n    return {"v": patchdemo.__version__}'
        text = tool_text("uses_demo", body, packages=["patchdemo==1.2.3"])
        r = run_source(text, {}, venv_root=root, timeout=30)
    assert r.ok, r.error
    assert r.result == {"v": "1.2.3"} and r.packages_installed == ["patchdemo==1.2.3"]
    # The second run reuses it: even with installing refused, and with no index.
    again = run_source(text, {}, venv_root=root, allow_install=False)
    assert again.ok and again.result == {"v": "1.2.3"}
    assert again.enforced["install"] == r.enforced["install"]  # how it was installed, kept
    assert ensure_venv(["patchdemo==1.2.3"], allow_install=False, venv_root=root).python.exists()
