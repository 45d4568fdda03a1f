"""A package index on 127.0.0.1 for the install tests: real wheels and sdists the test builds,
served by `http.server` in the PEP 503 layout pip reads (a folder listing per project).

    with PackageIndex(tmp_path / "index") as index:
        index.add_wheel("demo", "1.0", {"demo.py": "X = 1\\n"})
        index.add_sdist("evil", "1.0", backend_source)
        env["PATCH_TUI_PACKAGES_INDEX_URL"] = index.url
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import tarfile
import threading
import zipfile
from pathlib import Path
from types import TracebackType


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{path},sha256={digest.decode()},{len(data)}"


def build_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel holding `files` (paths relative to site-packages; a `.pth` too)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    content = {path: text.encode() for path, text in files.items()}
    content[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    content[f"{dist}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [_record_line(p, d) for p, d in content.items()] + [f"{dist}/RECORD,,"]
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, data in content.items():
            zf.writestr(path, data)
        zf.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return wheel


# An in-tree PEP 517 backend with no build requirements: it builds a wheel of one module, after
# running `attack` (the test's code, returning what it found) -- what a hostile sdist does at
# install time. What it found is built into the module (`FOUND`), so a tool can show it.
BACKEND = """
import os, sys, zipfile, base64, hashlib

NAME, VERSION = {name!r}, {version!r}


def _attack():
{attack}


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _attack()
    dist = f"{{NAME}}-{{VERSION}}.dist-info"
    os.makedirs(os.path.join(metadata_directory, dist))
    with open(os.path.join(metadata_directory, dist, "METADATA"), "w") as fh:
        fh.write(f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n")
    return dist


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    found = _attack()
    dist = f"{{NAME}}-{{VERSION}}.dist-info"
    files = {{
        f"{{NAME}}.py": f"BUILT = True\\nFOUND = {{found!r}}\\n".encode(),
        f"{{dist}}/METADATA": f"Metadata-Version: 2.1\\nName: {{NAME}}\\nVersion: {{VERSION}}\\n".encode(),
        f"{{dist}}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{{path}},sha256={{digest}},{{len(data)}}")
    record.append(f"{{dist}}/RECORD,,")
    name = f"{{NAME}}-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for path, data in files.items():
            zf.writestr(path, data)
        zf.writestr(f"{{dist}}/RECORD", "\\n".join(record) + "\\n")
    return name
"""


def build_sdist(folder: Path, name: str, version: str, attack: str) -> Path:
    """An sdist whose build backend runs `attack` (a function body) when pip builds it."""
    folder.mkdir(parents=True, exist_ok=True)
    body = "\n".join("    " + line for line in attack.strip("\n").splitlines()) or "    pass"
    base = f"{name}-{version}"
    files = {
        "pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "hostile_backend"\n'
            'backend-path = ["."]\n'
        ),
        "hostile_backend.py": BACKEND.format(name=name, version=version, attack=body),
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    sdist = folder / f"{base}.tar.gz"
    with tarfile.open(sdist, "w:gz") as tf:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{base}/{path}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return sdist


class _Recording(http.server.SimpleHTTPRequestHandler):
    """Serves the folder; records each request's path, logs nothing."""

    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass


class PackageIndex:
    """`root/simple/<name>/<files>`, served on 127.0.0.1 while the `with` block lasts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "simple").mkdir(parents=True, exist_ok=True)
        self.requests: list[str] = []  # the paths asked for, in order
        recording = type("Handler", (_Recording,), {"seen": self.requests})
        handler = functools.partial(recording, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def project(self, name: str) -> Path:
        folder = self.root / "simple" / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def add_wheel(self, name: str, version: str, files: dict[str, str]) -> Path:
        return build_wheel(self.project(name), name, version, files)

    def add_sdist(self, name: str, version: str, attack: str) -> Path:
        return build_sdist(self.project(name), name, version, attack)

    def __enter__(self) -> PackageIndex:
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
