"""Which distribution (the name `pip install` wants) provides an import, for PT043.

Most packages install a module with their own name; the ones below do not, and they are the ones
tool authors (and models) get wrong. For anything else the import name itself is the guess, and
the current environment's metadata is asked only when that guess matches no declaration.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

# import name (top-level, or dotted when a namespace package is shared) -> distribution
IMPORT_TO_DIST: dict[str, str] = {
    "bs4": "beautifulsoup4",
    "yaml": "pyyaml",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "Crypto": "pycryptodome",
    "Cryptodome": "pycryptodomex",
    "jwt": "pyjwt",
    "google.protobuf": "protobuf",
    "googleapiclient": "google-api-python-client",
    "google_auth_oauthlib": "google-auth-oauthlib",
    "google.auth": "google-auth",
    "google.cloud.storage": "google-cloud-storage",
    "google.cloud.bigquery": "google-cloud-bigquery",
    "google.generativeai": "google-generativeai",
    "fitz": "pymupdf",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "magic": "python-magic",
    "slugify": "python-slugify",
    "attr": "attrs",
    "serial": "pyserial",
    "usb": "pyusb",
    "OpenSSL": "pyopenssl",
    "git": "gitpython",
    "github": "pygithub",
    "telegram": "python-telegram-bot",
    "discord": "discord.py",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2-binary",
    "pkg_resources": "setuptools",
    "win32api": "pywin32",
    "websocket": "websocket-client",
    "zmq": "pyzmq",
    "lxml": "lxml",
    "Levenshtein": "python-levenshtein",
    "markdown": "markdown",
    "jose": "python-jose",
    "multipart": "python-multipart",
    "sentence_transformers": "sentence-transformers",
    "ruamel": "ruamel.yaml",
    "tomli_w": "tomli-w",
    "pypdf": "pypdf",
    "PyPDF2": "pypdf2",
    "Bio": "biopython",
    "nacl": "pynacl",
    "kafka": "kafka-python",
}

# Other distributions that install the same import name (a declared one of these is fine).
ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "cv2": ("opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"),
    "psycopg2": ("psycopg2",),
    "PIL": ("pillow-simd",),
    "Crypto": ("pycryptodomex", "pycrypto"),
    "yaml": ("pyyaml-include",),
    "magic": ("python-magic-bin",),
}

_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


def normalize(dist: str) -> str:
    """PEP 503 normalized distribution name, for comparisons."""
    return re.sub(r"[-_.]+", "-", dist).lower()


def is_stdlib(module: str) -> bool:
    return module.partition(".")[0] in _STDLIB


def declared_name(entry: str) -> str:
    """The distribution named by a runtime.packages entry (`requests==2.32.3` -> requests)."""
    return re.split(r"[=<>!~\[;@ ]", entry.strip(), maxsplit=1)[0]


def distribution_for(module: str) -> str:
    """The distribution that provides `module` (a dotted import name)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        dist = IMPORT_TO_DIST.get(".".join(parts[:n]))
        if dist is not None:
            return dist
    return parts[0].replace("_", "-").lower()


def distributions_for(module: str) -> list[str]:
    """Every distribution that may provide `module`, the usual one first."""
    top = module.partition(".")[0]
    return [distribution_for(module), *ALTERNATIVES.get(top, ()), top]


def installed_distributions(module: str) -> list[str]:
    """The distributions that provide `module` in this environment (slow the first time:
    only asked when the table and the import's own name do not match a declaration)."""
    return _installed_providers().get(module.partition(".")[0], [])


@lru_cache(maxsize=1)
def _installed_providers() -> dict[str, list[str]]:
    try:
        from importlib.metadata import packages_distributions

        return dict(packages_distributions())
    except Exception:  # broken metadata in some environment: the table is enough
        return {}


@lru_cache(maxsize=256)
def installed_version(dist: str) -> str | None:
    """The version installed here, when it can be pinned as `x.y.z` (else None)."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        found = version(dist)
    except (PackageNotFoundError, ValueError):
        return None
    except Exception:
        return None
    return found if re.fullmatch(r"\d+(\.\d+){0,2}", found) else None
