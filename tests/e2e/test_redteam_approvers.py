"""Red team (issue 23): a process of the user's without the approver's private key (it is in
ssh-agent or on a security key) that changes who is trusted instead of forging a signature:
it creates an approvers file beside the config file listing its own key, or points the config
file's `approvers_file` at one of its own. The runner (`patch-tui confirm`) is started with the
person's own environment; only files on disk changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from patch_tui.approvals import keys
from tests.runtimekit import approve_argv, cli, hold_mark, mark_box, runs_in


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Any]:
    box = mark_box(tmp_path)
    person = keys.create_key_file(tmp_path / "person" / "key", "alice@laptop")
    box["env"]["PATCH_TUI_APPROVER_KEY"] = str(person.path)
    box["intruder"] = keys.create_key_file(tmp_path / "intruder" / "key", "agent")
    return box


def _intruder_approves(box: dict[str, Any], token: str) -> Any:
    env = {**box["env"], "PATCH_TUI_APPROVER_KEY": str(box["intruder"].path)}
    return cli(env, *approve_argv(box["env"], token))


@pytest.mark.slow
def test_the_intruders_own_key_approves_nothing_while_trust_is_unchanged(box) -> None:
    """Zero config: the intruder's `inbox approve` with its own key in its own environment
    trusts that key (so it says approved), but the person's runner trusts the person's."""
    token = hold_mark(box, "intruder")
    _intruder_approves(box, token)
    ran = cli(box["env"], "confirm", token)
    assert ran.returncode == 1 and json.loads(ran.stdout)["status"] == "tampered", ran.stdout
    assert runs_in(box["marker"]) == []


HOLE = (
    "the approvers file is read from the config folder (or the file `approvers_file` names) "
    "whenever /etc/patch-tui/approvers.toml is absent, and a process of the user's can create "
    "or redirect it: it lists its own key and approves without the person's key; only a "
    "root-owned /etc/patch-tui/approvers.toml stops this (docs/guide/approvals.md says so)"
)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=HOLE)
@pytest.mark.parametrize(
    "how", ["beside-the-config", "approvers_file-in-config", "confirm-with-its-own-key-setting"]
)
def test_an_intruder_cannot_make_itself_an_approver(box, how: str) -> None:
    token = hold_mark(box, "intruder")
    line = f'[[approver]]\nname = "agent"\nkey = "{box["intruder"].public_line}"\n'
    config = Path(box["env"]["PATCH_TUI_CONFIG"])
    if how == "beside-the-config":
        (config.parent / "approvers.toml").write_text(line)
    elif how == "approvers_file-in-config":
        mine = box["tmp"] / "intruder" / "approvers.toml"
        mine.write_text(line)
        config.write_text(f"approvers_file = {json.dumps(str(mine))}\n")
    elif how == "confirm-with-its-own-key-setting":
        # Zero config trusts the key `approver_key` names: the intruder runs confirm itself.
        box["env"]["PATCH_TUI_APPROVER_KEY"] = str(box["intruder"].path)
    _intruder_approves(box, token)
    cli(box["env"], "confirm", token)
    assert runs_in(box["marker"]) == []
