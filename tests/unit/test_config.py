"""Settings: the start-up reader (`start_settings`, no pydantic) never disagrees with the
validated one (`load_settings`, pydantic-settings), whatever the config file and env hold."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patch_tui.settings import config
from patch_tui.settings.config import (
    START_FIELDS,
    ConfigError,
    Settings,
    StartSettings,
    load_settings,
    start_settings,
)


def _clear_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.lower().startswith("patch_tui_") and key != "PATCH_TUI_CONFIG":
            monkeypatch.delenv(key)


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("PATCH_TUI_CONFIG", str(path))
    _clear_env(monkeypatch)
    return path


def _outcome(read) -> tuple[str, object]:
    try:
        s = read()
    except ConfigError as exc:
        return "error", str(exc)
    return "ok", {name: getattr(s, name) for name in START_FIELDS}


def assert_agree(plain_expected: bool | None = None) -> None:
    """start_settings() gives what load_settings() gives (the same error for a broken file);
    `plain_expected`: whether the start-up reader should manage without pydantic here."""
    assert _outcome(start_settings) == _outcome(load_settings)
    if plain_expected is not None:
        try:
            config._read_plainly()
            plain = True
        except (config._Unsure, OSError, ValueError):
            plain = False
        assert plain is plain_expected


FILES = [
    # (config.toml text, or None for no file; read without pydantic?)
    (None, True),
    ("", True),
    ('theme = "patch-light"\n', True),
    ('theme = ""\n', True),
    ("theme = 3\n", False),
    ('[keymap]\n"desk.save" = "f2,ctrl+s"\n"app.quit" = "f12"\n', True),
    ("keymap = {}\n", True),
    ('[keymap]\ndesk.save = "f2"\n', False),  # a dotted key: a nested table
    ("keymap = { a = 1 }\n", False),
    ('keymap = "f2"\n', False),
    ("watch_tools = false\nwatch_themes = true\n", True),
    ('watch_tools = "false"\n', False),
    ("watch_tools = 0\n", False),
    ("max_repairs = 5\nconfirm_ttl = 60\n", True),
    ("confirm_ttl = -1\n", False),  # out of range: the validated reader words the error
    ("confirm_ttl = 2592001\n", False),
    ("serve_max_args_bytes = 4096\n", True),
    ('max_repairs = "5"\n', False),
    ("max_repairs = true\n", False),
    ("max_repairs = 2.0\n", False),
    ("max_repairs = 2.5\n", False),
    ('model = "claude-x"\nanthropic_api_key = "sk-1"\n', True),
    ("model = 1\n", False),
    ("anthropic_api_key = []\n", False),
    ('unknown = 1\nother = "x"\n[table]\nx = 1\n', True),
    ('Theme = "patch-light"\n', False),  # pydantic-settings matches keys regardless of case
    ('theme = "patch-light"\nTHEME = "patch-dark"\n', False),
    ("theme = \n", False),  # not TOML
    ('theme = "a"\ntheme = "b"\n', False),  # a duplicate key is not TOML either
]


@pytest.mark.parametrize(("text", "plain"), FILES)
def test_config_file_matrix(cfg: Path, text: str | None, plain: bool) -> None:
    if text is not None:
        cfg.write_text(text, encoding="utf-8")
    assert_agree(plain)


def test_config_file_not_utf8(cfg: Path) -> None:
    cfg.write_bytes(b'theme = "\xff"\n')
    assert_agree(False)


def test_config_path_is_a_folder(cfg: Path) -> None:
    cfg.mkdir()
    assert_agree()


ENVS = [
    ({"PATCH_TUI_THEME": "patch-contrast"}, True),
    ({"PATCH_TUI_THEME": ""}, True),
    ({"patch_tui_theme": "lower-case name"}, True),
    ({"Patch_Tui_Watch_Tools": "no"}, True),
    ({"PATCH_TUI_THEME": "x", "patch_tui_theme": "y"}, False),
    ({"PATCH_TUI_THEME": "\udcff"}, False),  # an undecodable byte in the environment
    ({"PATCH_TUI_UNKNOWN": "1", "PATCH_TUI_STORE": "/tmp/x"}, True),
    ({"PATCH_TUI_KEYMAP": '{"desk.save": "f2"}'}, True),
    ({"PATCH_TUI_KEYMAP": "{}"}, True),
    ({"PATCH_TUI_KEYMAP": '{"desk.save": 2}'}, False),
    ({"PATCH_TUI_KEYMAP": "null"}, False),
    ({"PATCH_TUI_KEYMAP": "[]"}, False),
    ({"PATCH_TUI_KEYMAP": "desk.save=f2"}, False),
    ({"PATCH_TUI_KEYMAP": ""}, False),
    ({"PATCH_TUI_MAX_REPAIRS": "7", "PATCH_TUI_CONFIRM_TTL": "600"}, True),
    ({"PATCH_TUI_MAX_REPAIRS": "007"}, True),
    ({"PATCH_TUI_MAX_REPAIRS": "-1"}, False),
    ({"PATCH_TUI_MAX_REPAIRS": " 7"}, False),
    ({"PATCH_TUI_MAX_REPAIRS": "1_0"}, False),
    ({"PATCH_TUI_MAX_REPAIRS": "seven"}, False),
    ({"PATCH_TUI_MAX_REPAIRS": "9" * 30}, False),
    ({"PATCH_TUI_MODEL": "m", "PATCH_TUI_ANTHROPIC_API_KEY": "k"}, True),
]
BOOL_SPELLINGS = [
    "1",
    "0",
    "true",
    "false",
    "True",
    "FALSE",
    "t",
    "F",
    "yes",
    "No",
    "y",
    "n",
    "on",
    "OFF",
    "",
    "2",
    " true",
    "true ",
    "tru",
    "yes!",
    "ｔｒｕｅ",
    "\u212a",
]


@pytest.mark.parametrize(("env", "plain"), ENVS)
def test_env_matrix(
    cfg: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], plain: bool
) -> None:
    cfg.write_text('theme = "patch-light"\n[keymap]\n"app.quit" = "f12"\n', encoding="utf-8")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert_agree(plain)


@pytest.mark.parametrize("word", BOOL_SPELLINGS)
def test_bool_spellings_in_env(cfg: Path, monkeypatch: pytest.MonkeyPatch, word: str) -> None:
    monkeypatch.setenv("PATCH_TUI_WATCH_TOOLS", word)
    monkeypatch.setenv("PATCH_TUI_WATCH_THEMES", word)
    assert_agree(word.isascii() and word.lower() in config._BOOL_WORDS)


@pytest.mark.parametrize(
    ("text", "env"),
    [
        ('theme = "patch-light"\n', {"PATCH_TUI_THEME": "patch-contrast"}),  # env wins
        ("watch_tools = true\n", {"PATCH_TUI_WATCH_TOOLS": "off"}),
        # The two sources merge a table: the file's keys stay unless env names them too.
        ('[keymap]\n"a" = "x"\n"b" = "y"\n', {"PATCH_TUI_KEYMAP": '{"b": "z", "c": "w"}'}),
        ("theme = 3\n", {"PATCH_TUI_THEME": "patch-light"}),  # a bad file value env replaces
        ('theme = "patch-light"\n', {"PATCH_TUI_WATCH_TOOLS": "maybe"}),
        ("max_repairs = 2.0\n", {"PATCH_TUI_THEME": "x"}),
        ("theme = [\n", {"PATCH_TUI_THEME": "x"}),
    ],
)
def test_env_over_file(
    cfg: Path, monkeypatch: pytest.MonkeyPatch, text: str, env: dict[str, str]
) -> None:
    cfg.write_text(text, encoding="utf-8")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert_agree()


_TOML_VALUES = st.sampled_from(
    [
        '"patch-light"',
        '""',
        "1",
        "0",
        "-3",
        "2.0",
        "true",
        "false",
        '"true"',
        '"5"',
        "[]",
        '["a"]',
        "{}",
        '{ "desk.save" = "f2" }',
        '{ "x" = 1 }',
        '{ "x" = { "y" = "z" } }',
    ]
)
_ENV_VALUES = st.sampled_from(
    [
        "",
        "x",
        "1",
        "0",
        "007",
        "-1",
        "true",
        "No",
        "on",
        " 1",
        "{}",
        '{"a": "b"}',
        '{"a": 1}',
        "null",
        "[1]",
        "{",
        "patch-dark",
    ]
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    file_values=st.dictionaries(
        st.sampled_from(sorted(config._KINDS) + ["Theme", "other"]), _TOML_VALUES, max_size=4
    ),
    env_values=st.dictionaries(st.sampled_from(sorted(config._KINDS)), _ENV_VALUES, max_size=3),
)
def test_random_configs_agree(
    cfg: Path,
    monkeypatch: pytest.MonkeyPatch,
    file_values: dict[str, str],
    env_values: dict[str, str],
) -> None:
    cfg.write_text("".join(f'"{k}" = {v}\n' for k, v in file_values.items()), encoding="utf-8")
    _clear_env(monkeypatch)
    for name, value in env_values.items():
        monkeypatch.setenv(f"PATCH_TUI_{name.upper()}", value)
    assert_agree()


def test_the_start_reader_knows_every_setting() -> None:
    """A new setting must be taught to start_settings() (or it would let a bad value through)."""
    assert set(config._KINDS) == set(Settings.model_fields)
    assert set(START_FIELDS) <= set(config._KINDS)
    defaults = Settings.model_construct()
    plain = StartSettings()
    assert {n: getattr(plain, n) for n in START_FIELDS} == {
        n: getattr(defaults, n) for n in START_FIELDS
    }


def test_start_settings_give_the_other_settings_from_the_validated_ones(cfg: Path) -> None:
    cfg.write_text('model = "claude-x"\nconfirm_ttl = 42\n', encoding="utf-8")
    s = start_settings()
    assert isinstance(s, StartSettings)
    assert s.model == "claude-x" and s.confirm_ttl == 42
    assert getattr(s, "no_such_setting", "missing") == "missing"
    # Broken after start-up: the other settings fall back to the defaults (no crash).
    cfg.write_text("confirm_ttl = [\n", encoding="utf-8")
    assert s.confirm_ttl == 300
    assert s.theme == "patch-dark"  # what start-up read stays


def test_settings_is_still_importable_from_config() -> None:
    from patch_tui.settings.config import DEFAULT_MODEL
    from patch_tui.settings.model import Settings as Direct

    assert Settings is Direct
    assert Settings.model_construct().model == DEFAULT_MODEL
    with pytest.raises(AttributeError):
        config.NoSuchName  # noqa: B018


async def test_a_config_broken_after_start_is_one_notification(cfg: Path, tmp_path: Path) -> None:
    """The app starts on what it read plainly, validates the whole file after its first frame,
    and says once, in plain text, what is wrong."""
    from desk_helpers import ready, tool_folder

    from patch_tui.runtime.toolbox import Toolbox
    from patch_tui.ui.app import CONFIG_CHECK_DELAY, PatchApp

    cfg.write_text("watch_tools = false\nwatch_themes = false\n", encoding="utf-8")
    settings_read = start_settings()
    cfg.write_text(
        'watch_tools = false\nwatch_themes = false\nmax_repairs = "[many]"\n', encoding="utf-8"
    )
    app = PatchApp(Toolbox.open(tool_folder(tmp_path)), settings=settings_read)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.pause(CONFIG_CHECK_DELAY + 0.3)
        for _ in range(50):
            notes = [n for n in app._notifications if n.title == "Config file"]
            if notes:
                break
            await pilot.pause(0.05)
        assert len(notes) == 1
        assert "max_repairs" in notes[0].message and str(cfg) in notes[0].message
        assert notes[0].markup is False
