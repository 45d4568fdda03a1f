"""These tests run against the real Patch runtime, built by `make interop`
(../shared/patch-runtime/build.sh). Without it (no node 20+, or plain `make test`) they are
skipped: `make interop` sets PATCH_RUNTIME_HARNESS to the built harness folder."""

from __future__ import annotations

import pytest

from tests.interop_runtime.kit import harness_dir


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if harness_dir() is not None:
        return
    skip = pytest.mark.skip(reason="needs the real Patch runtime: run `make interop`")
    for item in items:
        if "interop_runtime" in str(item.path):
            item.add_marker(skip)
