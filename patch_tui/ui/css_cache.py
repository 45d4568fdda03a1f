"""Parsed stylesheets kept from one start to the next, as Python keeps compiled bytecode
(docs/guide/performance.md, the desk's first frame).

Textual parses every stylesheet it meets (the app's app.tcss and each widget class's
DEFAULT_CSS) each time an app starts, and again whenever a source's place in the cascade (its
tie-breaker) changes as deeper widget classes arrive, or the theme's variables do: about 30 ms
of the desk's CPU before its first frame, against about 10 ms for a bare app. What a parse
yields depends only on the source's text, where it was read from, its place in the cascade and
the theme's variables, so once parsed it is kept: in this process for any later stylesheet with
the same variables, and in the user's cache folder for the next start (`save()`, when the app
ends; never when Python writes no bytecode, PYTHONDONTWRITEBYTECODE, a start that leaves no
caches behind).

The file is a pickle, read only when it and its folder belong to this user and nobody else may
write them (the cache folder is also read-only inside the tool sandbox), and then only through
an unpickler that builds nothing but the CSS model's own classes; anything else, or a file that
cannot be read, is ignored and the sources are parsed as Textual always did.
"""

from __future__ import annotations

import binascii
import contextlib
import copyreg
import dataclasses
import enum
import functools
import io
import os
import pickle
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.css.model import RuleSet, Selector
from textual.css.styles import Styles
from textual.css.stylesheet import Stylesheet

# Bumped when what a file holds changes shape.
FORMAT = 2
MAX_FILE_BYTES = 8 * 1024 * 1024
# One file per set of theme variables; the least recently written go beyond this.
MAX_FILES = 12

# (read_from, is_default_rules, tie_breaker, scope): where a source sits in the cascade.
Place = tuple[Any, bool, int, str]
Parse = Callable[..., list[RuleSet]]
# A source's text and its rule sets: as read from the file, still pickled (each is unpickled
# when a stylesheet asks for it, so a start pays for the sources it uses, not for every screen
# the cache has seen), or as parsed.
Entry = tuple[str, "list[RuleSet] | bytes"]

# The modules whose classes a parsed rule set is built from (model, styles, scalars, colours,
# geometry, layouts); the unpickler builds nothing else.
_MODULES = ("textual.css.", "textual.color", "textual.geometry", "textual.layouts.")
# The parser and the classes it builds: when one of these files changes, so may a parse.
_IDENTITY_MODULES = (
    "textual.css.tokenize",
    "textual.css.parse",
    "textual.css._styles_builder",
    "textual.css.model",
    "textual.css.styles",
    "textual.css.scalar",
    "textual.color",
)


def _by_fields(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """A dataclass that derives attributes in `__post_init__` (a style's `get_rule`, bound to
    its rules dict; a selector's match check) is saved as its fields and built again through
    its constructor: only data in the file, no bound methods or partials."""
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


_REDUCERS = {Styles: _by_fields, Selector: _by_fields}


def _enum_member(owner: Any, name: str) -> Any:
    """`getattr` as pickle uses it for an enum's member, and for nothing else."""
    if isinstance(owner, enum.EnumMeta) and name in owner.__members__:
        return owner.__members__[name]
    raise pickle.UnpicklingError(f"not part of a parsed stylesheet: getattr {name!r}")


class _RulesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _enum_member
        if "." not in name and module.startswith(_MODULES):
            found = getattr(sys.modules.get(module), name, None)
            # A class defined in that module, never one it imported: textual.geometry's
            # `attrgetter` and `itemgetter`, or textual.css.model's `partial`, chained by a
            # crafted file, reach a module's globals and `exec` (tests/ui/test_css_cache.py).
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"not part of a parsed stylesheet: {module}.{name}")


def _private_file(fd: int, folder: Path) -> bool:
    """The open file and its folder are this user's, and only this user may write them."""
    mine = os.getuid() if hasattr(os, "getuid") else None
    for info in (os.fstat(fd), os.stat(folder)):
        if mine is not None and info.st_uid != mine:
            return False
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
    return stat.S_ISREG(os.fstat(fd).st_mode)


def read_rules_file(path: Path, key: str) -> dict[Place, Entry]:
    """The parsed sources in `path` for `key` (the code and the theme variables they were
    parsed with), each still pickled, or nothing when the file cannot be trusted or read, or
    holds another key's."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return {}
    try:
        if not _private_file(fd, path.parent):
            return {}
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return {}
    try:
        loaded = _RulesUnpickler(io.BytesIO(data)).load()
    except Exception:  # a damaged or foreign file: unpickling can raise almost anything
        return {}
    if not isinstance(loaded, dict) or loaded.get("format") != FORMAT or loaded.get("key") != key:
        return {}
    entries = loaded.get("sources")
    if not isinstance(entries, dict):
        return {}
    return {
        place: entry
        for place, entry in entries.items()
        if isinstance(entry, tuple) and len(entry) == 2
        if isinstance(entry[0], str) and isinstance(entry[1], bytes)
    }


def _encode(rules: list[RuleSet]) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.dispatch_table = {**copyreg.dispatch_table, **_REDUCERS}
    pickler.dump(rules)
    return buffer.getvalue()


def _decode(blob: bytes) -> list[RuleSet] | None:
    """One source's rule sets, or None when the blob holds anything else."""
    try:
        rules = _RulesUnpickler(io.BytesIO(blob)).load()
    except Exception:  # damaged or foreign: unpickling can raise almost anything
        return None
    if isinstance(rules, list) and all(isinstance(rule, RuleSet) for rule in rules):
        return rules
    return None


class ParsedCss:
    """Parsed sources by theme variables, read from and saved to `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._sets: dict[str, dict[Place, Entry]] = {}
        self._grown: set[str] = set()
        # The key and file name of a stylesheet's variables, by the dict itself (a stylesheet
        # keeps its dict until the theme changes, and a fresh sheet of `reparse` shares it).
        self._names: dict[int, tuple[dict[str, str], str]] = {}
        self._keys: dict[str, str] = {}
        self.parsed = 0  # sources parsed in this process (the tests count them)

    def _name(self, variables: dict[str, str]) -> str:
        known = self._names.get(id(variables))
        if known is not None and known[0] is variables:
            return known[1]
        text = "\n".join(f"{k}={v}" for k, v in sorted(variables.items()))
        key = f"{_code_identity()}\n{text}"
        # A short name; the whole key is in the file and checked when it is read.
        name = f"{binascii.crc32(key.encode()):08x}"
        self._names[id(variables)] = (variables, name)
        self._keys[name] = key
        return name

    def _set(self, name: str) -> dict[Place, Entry]:
        found = self._sets.get(name)
        if found is None:
            path = self.folder / f"{name}.pickle"
            found = self._sets[name] = read_rules_file(path, self._keys[name])
        return found

    def rules(self, sheet: Stylesheet, css: str, place: Place, parse: Parse) -> list[RuleSet]:
        name = self._name(sheet._variables)
        known = self._set(name)
        entry = known.get(place)
        if entry is not None and entry[0] == css:
            kept = entry[1]
            if not isinstance(kept, bytes):
                return kept
            decoded = _decode(kept)
            if decoded is not None:
                known[place] = (css, decoded)
                return decoded
        rules = parse()
        self.parsed += 1
        if not any(rule.errors for rule in rules):  # a broken source is parsed (and shown) again
            known[place] = (css, rules)
            self._grown.add(name)
        return rules

    def save(self) -> None:
        """Write each set that gained sources in this process; nothing when Python writes no
        bytecode. A folder or file that cannot be written is left as it is."""
        if sys.dont_write_bytecode or not self._grown:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            for name in sorted(self._grown):
                self._write(self.folder / f"{name}.pickle", self._keys[name], self._sets[name])
            self._grown.clear()
            self._prune()
        except Exception:  # noqa: BLE001 - a cache: a folder that cannot be written, or a
            # style this pickler cannot save (a Textual to come), leaves the app's end as it was
            return

    @staticmethod
    def _write(path: Path, key: str, sources: dict[Place, Entry]) -> None:
        pickled = {
            place: (css, kept if isinstance(kept, bytes) else _encode(kept))
            for place, (css, kept) in sources.items()
        }
        data = pickle.dumps({"format": FORMAT, "key": key, "sources": pickled}, protocol=5)
        if len(data) > MAX_FILE_BYTES:
            return
        import tempfile  # at the app's end only

        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".css-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.pickle"), key=lambda p: p.stat().st_mtime)
        for old in files[:-MAX_FILES]:
            with contextlib.suppress(OSError):
                old.unlink()


@functools.cache
def _code_identity() -> str:
    """The Python and the files of the classes a parsed rule set is made of (their size and
    time, as Python's bytecode cache checks a source): another Textual, another cache file.
    Asking Textual for its version would read its package metadata on every start."""
    parts = [f"format {FORMAT}", sys.version]
    for name in _IDENTITY_MODULES:
        path = getattr(sys.modules.get(name), "__file__", None)
        with contextlib.suppress(OSError, TypeError):
            info = os.stat(path)  # type: ignore[arg-type]
            parts.append(f"{name} {info.st_size} {info.st_mtime_ns}")
    return "\n".join(parts)


_active: ParsedCss | None = None


def _install_hook() -> None:
    parse_rules = Stylesheet._parse_rules
    if getattr(parse_rules, "_patch_tui_css_cache", False):
        return

    def cached_parse_rules(
        self: Stylesheet,
        css: str,
        read_from: Any,
        is_default_rules: bool = False,
        tie_breaker: int = 0,
        scope: str = "",
    ) -> list[RuleSet]:
        def parse() -> list[RuleSet]:
            return parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)

        if _active is None:
            return parse()
        return _active.rules(self, css, (read_from, is_default_rules, tie_breaker, scope), parse)

    cached_parse_rules._patch_tui_css_cache = True  # type: ignore[attr-defined]
    Stylesheet._parse_rules = cached_parse_rules  # type: ignore[method-assign]


def default_folder() -> Path:
    from patch_tui.settings import paths

    return paths.cache_dir() / "css"


def activate(folder: Path | None = None) -> ParsedCss:
    """Keep parsed stylesheets from here on (in `folder`, by default the user's cache folder)."""
    global _active
    _install_hook()
    _active = ParsedCss(folder if folder is not None else default_folder())
    return _active


def deactivate() -> None:
    global _active
    _active = None


def save() -> None:
    """Save what was parsed in this process for the next start (when the app ends)."""
    if _active is not None:
        _active.save()
