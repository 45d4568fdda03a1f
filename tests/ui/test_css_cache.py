"""Parsed stylesheets kept from one start to the next (patch_tui/ui/css_cache.py): the desk
looks the same from them, a changed source or theme is parsed anew, and a cache file that is not
the user's own, or holds anything but parsed CSS, is never used."""

from __future__ import annotations

import importlib
import io
import os
import pickle
import pkgutil
import sys
from pathlib import Path

import pytest
from desk_helpers import make_app, ready
from textual.app import App
from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.layout import Layout

import patch_tui.ui
from patch_tui.ui import css_cache

pytestmark = pytest.mark.usefixtures("desk_env")

PLACE = ("/somewhere/widget.py", "Card.DEFAULT_CSS")


@pytest.fixture(autouse=True)
def _writes_caches(monkeypatch: pytest.MonkeyPatch):
    # The test suite may run with PYTHONDONTWRITEBYTECODE, under which nothing is saved.
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    yield
    css_cache.deactivate()


def _parse(css: str, variables: dict[str, str] | None = None) -> list:
    sheet = Stylesheet(variables=variables or {})
    sheet.add_source(css, read_from=PLACE, is_default_css=True, tie_breaker=-2, scope="Card")
    sheet.parse()
    return sheet.rules


def _restart(folder: Path) -> css_cache.ParsedCss:
    """A new process's view: nothing in memory, only what the folder holds."""
    return css_cache.activate(folder)


async def _desk_screen(folder: Path) -> str:
    app = make_app(folder)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        for widget in app.screen.query("Input, TextArea"):
            widget.cursor_blink = False  # type: ignore[attr-defined]
        await pilot.pause(0.1)
        return app.export_screenshot()


async def test_the_desk_looks_the_same_from_cached_stylesheets(folder: Path, tmp_path: Path):
    plain = await _desk_screen(folder)
    cold = css_cache.activate(tmp_path / "css")
    first = await _desk_screen(folder)
    cold.save()
    warm = _restart(tmp_path / "css")
    second = await _desk_screen(folder)
    assert cold.parsed > 10  # the desk's sources were parsed once ...
    assert warm.parsed == 0  # ... and read back on the next start, none parsed again
    assert plain == first == second


def test_every_stylesheet_reads_back_as_parsed(tmp_path: Path):
    """Every widget class's CSS (Textual's and ours, the screens opened later too) and app.tcss:
    what is read back is what was parsed, rule for rule."""
    for module in pkgutil.walk_packages(patch_tui.ui.__path__, "patch_tui.ui."):
        importlib.import_module(module.name)
    sources = [
        (cls.__name__, css)
        for cls in _subclasses(DOMNode)
        if (css := cls.__dict__.get("DEFAULT_CSS"))
    ]
    sources.append(("app.tcss", (Path(patch_tui.ui.__file__).parent / "app.tcss").read_text()))
    assert len(sources) > 50

    def parse_all() -> list:
        sheet = Stylesheet(variables=App().get_css_variables())
        for name, css in sources:
            sheet.add_source(css, read_from=("x", name), is_default_css=True, scope=name)
        sheet.parse()
        return sheet.rules

    cold = css_cache.activate(tmp_path / "css")
    parsed = parse_all()
    cold.save()
    warm = _restart(tmp_path / "css")
    read_back = parse_all()
    assert warm.parsed == 0
    assert [_described(r) for r in read_back] == [_described(r) for r in parsed]
    # What a rule decides with: the selectors' match checks are rebuilt, not pickled.
    selector = read_back[0].selector_set[0].selectors[-1]
    assert selector._check.func.__module__ == "textual.css.model"


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return list(dict.fromkeys(found))


def _described(rule) -> tuple:
    return (
        rule.selectors,
        [
            (s.specificity, [(x.name, x.type, x.combinator) for x in s.selectors])
            for s in rule.selector_set
        ],
        # A layout is an object of its own in each parse (no two compare equal): its kind.
        {
            k: type(v).__name__ if isinstance(v, Layout) else v
            for k, v in rule.styles.get_rules().items()
        },
        rule.styles.important,
        rule.is_default_rules,
        rule.tie_breaker,
        rule.selector_names,
        rule.pseudo_classes,
    )


def test_a_source_changed_since_is_parsed_again(tmp_path: Path):
    cache = css_cache.activate(tmp_path / "css")
    _parse("Card { color: red; }")
    cache.save()
    cache = _restart(tmp_path / "css")
    rules = _parse("Card { color: blue; }")  # the same widget, its CSS edited
    assert cache.parsed == 1
    assert "#0000FF" in rules[0].css


def test_other_theme_variables_are_parsed_with_their_values(tmp_path: Path):
    cache = css_cache.activate(tmp_path / "css")
    red = _parse("Card { color: $accent; }", {"accent": "#ff0000"})
    cache.save()
    cache = _restart(tmp_path / "css")
    blue = _parse("Card { color: $accent; }", {"accent": "#0000ff"})
    again = _parse("Card { color: $accent; }", {"accent": "#ff0000"})
    assert cache.parsed == 1  # the new theme's; the first one's came from the file
    assert "#FF0000" in red[0].css and "#0000FF" in blue[0].css and "#FF0000" in again[0].css


def test_a_broken_source_is_reported_every_time(tmp_path: Path):
    from textual.css.stylesheet import StylesheetParseError

    cache = css_cache.activate(tmp_path / "css")
    for _ in range(2):
        with pytest.raises(StylesheetParseError):
            _parse("Card { colour: red; }")
    cache.save()
    assert cache.parsed == 2
    assert not list((tmp_path / "css").glob("*.pickle"))


def test_nothing_is_written_when_python_writes_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = css_cache.activate(tmp_path / "css")
    _parse("Card { color: red; }")
    cache.save()
    assert not (tmp_path / "css").exists()


def _saved_file(tmp_path: Path) -> tuple[Path, str]:
    """A cache file as the app writes it, and the key it was written for."""
    cache = css_cache.activate(tmp_path / "css")
    _parse("Card { color: red; }")
    cache.save()
    (path,) = (tmp_path / "css").glob("*.pickle")
    (key,) = cache._keys.values()
    assert css_cache.read_rules_file(path, key)  # readable as it was written
    return path, key


def test_a_file_written_for_other_variables_is_not_used(tmp_path: Path):
    cache = css_cache.activate(tmp_path / "css")
    _parse("Card { color: $accent; }", {"accent": "#ff0000"})
    cache.save()
    (red,) = (tmp_path / "css").glob("*.pickle")
    cache = _restart(tmp_path / "css")
    blue = _parse("Card { color: $accent; }", {"accent": "#0000ff"})
    (name,) = cache._keys
    red.rename(red.with_name(f"{name}.pickle"))  # under the other theme's name
    cache = _restart(tmp_path / "css")
    again = _parse("Card { color: $accent; }", {"accent": "#0000ff"})
    assert cache.parsed == 1
    assert "#0000FF" in blue[0].css and "#0000FF" in again[0].css


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX file owners")
def test_a_file_others_may_write_is_not_read(tmp_path: Path):
    path, key = _saved_file(tmp_path)
    assert stat_mode(path) & 0o077 == 0 and stat_mode(path.parent) & 0o077 == 0
    path.chmod(0o664)
    assert css_cache.read_rules_file(path, key) == {}
    path.chmod(0o600)
    path.parent.chmod(0o777)
    assert css_cache.read_rules_file(path, key) == {}
    path.parent.chmod(0o700)
    link = path.with_name("link.pickle")
    link.symlink_to(path)
    assert css_cache.read_rules_file(link, key) == {}
    assert css_cache.read_rules_file(path, key)


def stat_mode(path: Path) -> int:
    return path.stat().st_mode


class _RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _GetsAttribute:
    """An attribute of a class the cache may build (the way in to its module's globals)."""

    def __reduce__(self):
        return (getattr, (RuleSet, "__init__"))


def _chained_getters(marker: Path) -> bytes:
    """A file that builds no class of the CSS model, only callables the model's modules
    import: itemgetter and attrgetter (as textual.geometry names them), chained to reach
    RuleSet.__init__.__globals__["__builtins__"]["exec"], then called to create `marker`."""

    def text(value: str) -> str:
        return "V" + value + "\n"

    def getter(kind: str, path: str) -> str:
        return f"ctextual.geometry\n{kind}\n(" + text(path) + "tR"

    return (
        getter("itemgetter", "exec")
        + "("
        + getter("itemgetter", "__builtins__")
        + "("
        + getter("attrgetter", "__init__.__globals__")
        + "(ctextual.css.model\nRuleSet\ntR"  # RuleSet's module's globals
        + "tR"  # their __builtins__
        + "tR"  # its exec
        + "("
        + text(f"open({str(marker)!r}, 'w').close()")
        + "tR."
    ).encode()


def test_a_file_chaining_what_the_model_s_modules_import_runs_nothing(tmp_path: Path):
    marker = tmp_path / "ran"
    with pytest.raises(pickle.UnpicklingError, match="not part of a parsed stylesheet"):
        css_cache._RulesUnpickler(io.BytesIO(_chained_getters(marker))).load()
    assert not marker.exists()
    path, key = _saved_file(tmp_path)
    path.write_bytes(_chained_getters(marker))
    assert css_cache.read_rules_file(path, key) == {}
    assert not marker.exists()


@pytest.mark.parametrize("payload", ["system", "getattr", "damaged", "format"])
def test_a_file_holding_anything_but_parsed_css_is_not_used(tmp_path: Path, payload: str):
    path, key = _saved_file(tmp_path)
    marker = tmp_path / "ran"
    good = path.read_bytes()
    payloads = {
        "system": lambda: pickle.dumps(
            {"format": css_cache.FORMAT, "key": key, "sources": _RunsCode(marker)}
        ),
        "getattr": lambda: pickle.dumps(
            {"format": css_cache.FORMAT, "key": key, "sources": _GetsAttribute()}
        ),
        "damaged": lambda: good[: len(good) // 2],
        "format": lambda: good.replace(b"format", b"formal"),
    }
    data = payloads[payload]()
    path.write_bytes(data)
    assert css_cache.read_rules_file(path, key) == {}
    assert not marker.exists()
    # The desk's sources are then parsed as ever, and the file rewritten when the app ends.
    cache = _restart(tmp_path / "css")
    _parse("Card { color: red; }")
    assert cache.parsed == 1
    cache.save()
    assert css_cache.read_rules_file(path, key)


def test_a_style_that_cannot_be_saved_leaves_the_app_s_end_alone(tmp_path: Path):
    import threading

    cache = css_cache.activate(tmp_path / "css")
    rules = _parse("Card { color: red; }")
    rules[0].pseudo_classes = {threading.Lock()}  # what a later Textual might hold: no pickle
    cache.save()  # no traceback as the app ends
    assert not list((tmp_path / "css").glob("*"))


def test_a_source_in_the_file_holding_anything_but_rules_is_parsed_instead(tmp_path: Path):
    """Each source's rules are unpickled when a stylesheet asks for them, through the same
    unpickler: one that would run code is parsed anew, and nothing runs."""
    path, key = _saved_file(tmp_path)
    marker = tmp_path / "ran"
    (place,) = css_cache.read_rules_file(path, key)
    evil = {place: ("Card { color: red; }", pickle.dumps(_RunsCode(marker)))}
    path.write_bytes(pickle.dumps({"format": css_cache.FORMAT, "key": key, "sources": evil}))
    cache = _restart(tmp_path / "css")
    rules = _parse("Card { color: red; }")
    assert cache.parsed == 1 and "#FF0000" in rules[0].css
    assert not marker.exists()
    cache.save()  # and the file holds the parsed rules again
    cache = _restart(tmp_path / "css")
    _parse("Card { color: red; }")
    assert cache.parsed == 0


def test_a_start_unpickles_only_the_sources_it_uses(tmp_path: Path):
    cache = css_cache.activate(tmp_path / "css")
    sheet = Stylesheet(variables={})
    for name in ("One", "Two"):
        sheet.add_source(f"{name} {{ color: red; }}", read_from=("x", name), scope=name)
    sheet.parse()
    cache.save()
    cache = _restart(tmp_path / "css")
    one = Stylesheet(variables={})
    one.add_source("One { color: red; }", read_from=("x", "One"), scope="One")
    one.parse()
    assert cache.parsed == 0
    (kept,) = cache._sets.values()
    still_pickled = {place[0][1] for place, (_, rules) in kept.items() if isinstance(rules, bytes)}
    assert still_pickled == {"Two"}
