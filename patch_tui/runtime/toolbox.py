"""A toolbox: a folder of tool files, or a Patch toolbox (a folder with `tools/` and `index.json`).

Everything that writes goes through `atomic_write` (runtime.toolbox_files), so a crash or a full
disk never leaves a half-written tool. index.json's shape and edits: runtime.toolbox_index.

`save_tool` refuses to overwrite a file whose bytes changed since they were loaded
(`FileChangedOnDisk`): the caller decides (reload, keep mine, diff); nothing is lost silently.

Layout of what we keep next to the tools:
- history: `<history_dir>/<tool name>/<version>.py`, one file per superseded version;
- trash:   `<root>/.trash/<file stem>-<UTC stamp>.py`: deleting a tool never removes bytes;
- runs:    `<runs_dir>/`, for the runner's logs;
- drafts:  `<drafts_dir>/<name>.py`, tools an agent generated, waiting for a person's review.

`index.json` is the Patch runtime's (`mcp/src/toolbox.ts`): `{name: {name, version,
description, filePath, embedding, lastUsedAt, createdAt}}`, 2-space JSON. Only indexed tools
exist for the runtime, and one entry whose file it cannot parse makes its whole `tools/list`
fail, so every operation here keeps the index in step: an entry is written for each tool the
runtime can parse (`runtime_format.accepts`), with `filePath` absolute; an entry is never added
for a file the runtime would refuse; fields we do not own (`embedding`, `lastUsedAt`,
`createdAt`, anything else) are kept as they were. An index in an older shape that patch-tui
used to write (`{"tools": [...]}`, a list) is rewritten in the runtime's shape, keeping every
entry's fields.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

# format.toolfile (and YAML) is imported by the functions that read or write a tool file: opening
# a toolbox reads none, and `patch-tui inbox` opens one before its first frame.
from patch_tui.format.fields import NAME_RE, bump_version
from patch_tui.runtime.toolbox_files import (  # noqa: F401 - re-exported: callers import them here
    FileChangedOnDisk,
    ToolboxError,
    ToolboxUnreadable,
    _fsync_dir,
    _note_own_write,
    _to_bytes,
    atomic_write,
    file_sha256,
    sha256_bytes,
)
from patch_tui.runtime.toolbox_index import (  # noqa: F401 - re-exported
    _abs,
    _as_runtime_index,
    _runtime_manifest,
    _upsert,
    index_json,
    now_iso,
)

if TYPE_CHECKING:  # pydantic is imported when a manifest is first validated (saves, new tools)
    from patch_tui.format.manifest import Manifest

INDEX_NAME = "index.json"
TOOLS_DIR_NAME = "tools"
# Files in the tools folder that are not tools (a package marker, our own temp files).
_NOT_TOOLS = ("__init__.py",)

Part = Literal["major", "minor", "patch"]


class SaveResult(NamedTuple):  # not a frozen dataclass: a fifth of the import time
    path: Path
    sha256: str  # of the bytes now on disk
    index_updated: bool = False
    history_path: Path | None = None  # where the previous version went (save_new_version)
    version: str | None = None


def _utc_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


# --- the tool template -------------------------------------------------------------------


def new_tool_text(name: str, description: str | None = None) -> str:
    """A small tool that takes one string and returns it; lint-clean but for PT052 on the
    template description when no `description` is given."""
    from patch_tui.format import toolfile
    from patch_tui.format.manifest import Manifest
    from patch_tui.format.templates import TOOL_DESCRIPTION

    manifest = Manifest.model_validate(
        {
            "name": name,
            "version": "0.1.0",
            # A sentence to replace (PT052 flags it until it is): never served as if written.
            "description": description or TOOL_DESCRIPTION.format(name=name),
            # main() only reads the text as data, so outside content may flow in (PT046).
            "inputs": [
                {
                    "name": "text",
                    "type": "string",
                    "description": "The text to work on.",
                    "tainted_ok": True,
                }
            ],
            "outputs": {"type": "object", "description": "The result."},
            "capabilities": {"network": False, "filesystem": "none", "human_confirm": False},
            "runtime": {"language": "python", "python_version": "3.12", "packages": []},
        }
    )
    body = (
        "import json\n"
        "import sys\n"
        "\n"
        "\n"
        "def main(text: str) -> dict:\n"
        '    return {"text": text}\n'
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    args = json.loads(sys.stdin.read())\n"
        "    print(json.dumps(main(**args)))\n"
    )
    return toolfile.serialize(manifest, body)


def _check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise ToolboxError(
            f"{name!r} is not a valid tool name: use lowercase letters, digits and underscores, "
            "starting with a letter"
        )


# --- the toolbox ---------------------------------------------------------------------------


class Toolbox:
    """A folder of tools. Use `Toolbox.open(path)`."""

    def __init__(self, root: Path, tools_dir: Path, is_patch_toolbox: bool) -> None:
        self.root = root
        self.tools_dir = tools_dir
        self.is_patch_toolbox = is_patch_toolbox

    def __repr__(self) -> str:
        kind = "patch" if self.is_patch_toolbox else "folder"
        return f"Toolbox({str(self.root)!r}, {kind})"

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Toolbox:
        """The toolbox holding a tool file, or the toolbox at a folder.

        A folder with `tools/` (and usually `index.json`) is a Patch toolbox; so is its `tools/`
        folder when the parent has `index.json`. Any other folder is a plain folder of tools.
        Raises ToolboxError when the path does not exist, ToolboxUnreadable when it cannot be
        read (every command that opens a toolbox then says so in one line).
        """
        p = Path(path).expanduser()
        try:
            if not p.exists():
                raise ToolboxError(f"{p}: no such file or folder")
            box = cls._at(p)
            box.tool_paths()  # a folder that cannot be listed is reported here, once
        except OSError as exc:
            raise ToolboxUnreadable(
                f"{p}: cannot read the toolbox folder ({exc.strerror or exc})"
            ) from None
        return box

    @classmethod
    def _at(cls, p: Path) -> Toolbox:
        folder = (p if p.is_dir() else p.parent).resolve()
        if (folder / TOOLS_DIR_NAME).is_dir() and (
            (folder / INDEX_NAME).exists() or not any(folder.glob("*.py"))
        ):
            return cls(folder, folder / TOOLS_DIR_NAME, True)
        if folder.name == TOOLS_DIR_NAME and (folder.parent / INDEX_NAME).exists():
            return cls(folder.parent, folder, True)
        return cls(folder, folder, False)

    # -- where things go --------------------------------------------------------------------

    @property
    def index_path(self) -> Path | None:
        return self.root / INDEX_NAME if self.is_patch_toolbox else None

    @property
    def history_dir(self) -> Path:
        return self.root / ("history" if self.is_patch_toolbox else ".history")

    @property
    def runs_dir(self) -> Path:
        return self.root / ("runs" if self.is_patch_toolbox else ".runs")

    @property
    def trash_dir(self) -> Path:
        return self.root / ".trash"

    @property
    def drafts_dir(self) -> Path:
        """Tools written by an agent (`patch_generate_tool`), for a person to review: never
        served or run from here, and hidden from every tool run."""
        return self.root / ("drafts" if self.is_patch_toolbox else ".drafts")

    # -- reading ----------------------------------------------------------------------------

    def tool_paths(self) -> list[Path]:
        """The tool files, sorted by name (hidden and temporary files left out, and anything
        that is not a regular file: a FIFO or a link to a device is never opened).

        Raises ToolboxUnreadable when the folder cannot be listed (Path.glob would silently
        give nothing, and the person would see an empty toolbox instead of the reason)."""
        try:
            if not self.tools_dir.is_dir():
                return []
            with os.scandir(self.tools_dir) as listing:
                names = [
                    entry.name
                    for entry in listing
                    if entry.name.endswith(".py")
                    and not entry.name.startswith(".")
                    and entry.name not in _NOT_TOOLS
                ]
        except OSError as exc:
            raise ToolboxUnreadable(
                f"{self.tools_dir}: cannot read the toolbox folder ({exc.strerror or exc})"
            ) from None
        found = []
        for name in names:
            path = self.tools_dir / name
            try:
                if path.is_file():
                    found.append(path)
            except OSError:
                found.append(path)  # listed, but not readable: its own row says why
        return sorted(found)

    def path_for(self, name: str) -> Path:
        """Where a tool of this name lives by convention."""
        return self.tools_dir / f"{name}.py"

    def find(self, name: str) -> Path | None:
        """A tool by its manifest name, else by its file stem."""
        conventional = self.path_for(name)
        paths = self.tool_paths()
        # The conventional file usually holds the tool: check it first, then every file.
        ordered = ([conventional] if conventional in paths else []) + [
            p for p in paths if p != conventional
        ]
        for p in ordered:
            if _manifest_name(p) == name:
                return p
        return conventional if conventional in paths else None

    # -- saving -----------------------------------------------------------------------------

    def save_tool(
        self,
        path: str | os.PathLike[str],
        text: str | bytes,
        *,
        expected_sha256: str | None,
    ) -> SaveResult:
        """Save a tool atomically. With `expected_sha256` (the hash of the bytes loaded), refuse
        with FileChangedOnDisk when the file on disk is not those bytes any more. None means
        "overwrite whatever is there" (the person chose "keep mine")."""
        p = Path(path)
        data = _to_bytes(text)
        if expected_sha256 is not None:
            actual = file_sha256(p)
            if actual != expected_sha256:
                raise FileChangedOnDisk(p, expected_sha256, actual)
        atomic_write(p, data)
        updated = self._index_from_bytes(p, data)
        return SaveResult(p, sha256_bytes(data), updated)

    def _index_from_bytes(self, path: Path, data: bytes) -> bool:
        """Bring the tool's index entry in step with the bytes just written. Returns whether the
        tool is in the index now (False: the runtime cannot parse it, so it is left out)."""
        if not self.is_patch_toolbox:
            return False
        manifest = _runtime_manifest(data)
        if manifest is None:
            # Saved (never lose work) but not published: an entry whose file the runtime cannot
            # parse would break its whole tools/list. Lint says why.
            self._drop_entries_for(path)
            return False
        self._edit_index(lambda index: _upsert(index, manifest, path))
        return True

    def save_new_version(
        self,
        path: str | os.PathLike[str],
        text: str | bytes,
        part: Part = "patch",
        *,
        expected_sha256: str | None = None,
    ) -> SaveResult:
        """Keep the file's current version in the history, then save `text` with its version
        bumped (from the larger of the on-disk and the edited version, so it always moves up)."""
        from patch_tui.format import toolfile

        p = Path(path)
        data = _to_bytes(text)
        tf = toolfile.parse_bytes(data, path=str(p))
        if tf.manifest is None or not isinstance(tf.data, dict):
            raise ToolboxError(f"{p}: fix the manifest before saving a new version")
        if expected_sha256 is not None:
            actual = file_sha256(p)
            if actual != expected_sha256:
                raise FileChangedOnDisk(p, expected_sha256, actual)
        history_path: Path | None = None
        base = tf.manifest.version
        if p.exists():
            old_raw = p.read_bytes()
            old = toolfile.parse_bytes(old_raw, path=str(p))
            old_name = old.manifest.name if old.manifest else tf.manifest.name
            old_version = old.manifest.version if old.manifest else None
            if old_version is not None:
                history_path = self.history_dir / old_name / f"{old_version}.py"
                if history_path.exists() and history_path.read_bytes() != old_raw:
                    # The version was edited in place after it was kept: keep both, never lose one.
                    history_path = history_path.with_name(f"{old_version}+{_utc_stamp()}.py")
                if not history_path.exists():
                    atomic_write(history_path, old_raw)
                base = max(base, old_version, key=_version_key)
        new_version = bump_version(base, part)
        new_text = toolfile.with_frontmatter(
            tf, toolfile.set_field(tf.data, ("version",), new_version)
        )
        new_data = ((toolfile.BOM if tf.bom else "") + new_text).encode("utf-8")
        atomic_write(p, new_data)
        updated = self._index_from_bytes(p, new_data)
        return SaveResult(p, sha256_bytes(new_data), updated, history_path, new_version)

    def history(self, name: str) -> list[tuple[str, Path]]:
        """Earlier versions of a tool, oldest first: (version, path)."""
        folder = self.history_dir / name
        if not folder.is_dir():
            return []
        found = [(p.stem, p) for p in folder.glob("*.py") if p.is_file()]
        return sorted(found, key=lambda vp: (_version_key(vp[0]), vp[0]))

    # -- the index ----------------------------------------------------------------------------

    def read_index(self) -> Any:
        """The raw index data, or None when there is none or it cannot be read."""
        ip = self.index_path
        if ip is None or not ip.exists():
            return None
        try:
            return json.loads(ip.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def index_entries(self) -> dict[str, dict[str, Any]]:
        """The index in the runtime's shape ({name: entry}); empty when there is none."""
        raw = self.read_index()
        return _as_runtime_index(raw, self.tools_dir) if raw is not None else {}

    def update_index(
        self, path: str | os.PathLike[str], manifest: Manifest | dict[str, Any]
    ) -> None:
        """Put a tool's entry in index.json (name, version, description, filePath), atomically."""
        data = manifest if isinstance(manifest, dict) else manifest.model_dump()
        self._edit_index(lambda index: _upsert(index, data, Path(path)))

    def remove_from_index(self, name: str) -> None:
        self._edit_index(lambda index: {k: v for k, v in index.items() if k != name})

    def _drop_entries_for(self, path: Path) -> None:
        """Remove the entries pointing at this file (a tool the runtime can no longer parse)."""
        target = _abs(path)

        def drop(index: dict[str, Any]) -> dict[str, Any]:
            return {
                k: v
                for k, v in index.items()
                if not (
                    isinstance(v, dict)
                    and isinstance(v.get("filePath"), str)
                    and _abs(Path(v["filePath"])) == target
                )
            }

        if self.index_path is not None and self.index_path.exists():
            self._edit_index(drop)

    def _edit_index(self, change: Any) -> None:
        ip = self.index_path
        if ip is None:
            return
        raw = self.read_index() if ip.exists() else {}
        if raw is None:
            if ip.read_text(encoding="utf-8", errors="replace").strip():
                raise ToolboxError(f"{ip}: not valid JSON; fix it by hand, the tool was saved")
            raw = {}  # an empty file is an empty index, as the runtime reads it
        before = _as_runtime_index(raw, self.tools_dir)
        after = change(dict(before))
        if after == raw and ip.exists():
            return  # nothing changed: leave the file (and its mtime) alone
        atomic_write(ip, index_json(after).encode("utf-8"))

    def sync_index(self, paths: list[Path] | None = None) -> None:
        """Register every tool file the runtime can parse that the index does not list yet (or
        lists with another version, description or file), and drop entries whose file is
        gone or no longer parses. Entries of parseable tools are never removed."""
        if not self.is_patch_toolbox:
            return
        found: dict[Path, dict[str, Any] | None] = {}
        for p in paths if paths is not None else self.tool_paths():
            try:
                found[_abs(p)] = _runtime_manifest(p.read_bytes())
            except OSError:
                found[_abs(p)] = None

        def change(index: dict[str, Any]) -> dict[str, Any]:
            out = dict(index)
            for key, entry in index.items():
                if not isinstance(entry, dict) or "name" not in entry:
                    continue  # not an entry: a field someone else keeps here
                if not isinstance(entry.get("filePath"), str):
                    del out[key]  # no file to read: the runtime skips it (re-added below if found)
                    continue
                file = _abs(Path(entry["filePath"]))
                if file in found and found[file] is None:
                    del out[key]  # its file no longer parses: it would break the runtime's list
                elif not file.exists():
                    del out[key]  # the runtime skips it anyway; keep the index honest
            for file, manifest in found.items():
                if manifest is not None:
                    out = _upsert(out, manifest, file)
            return out

        self._edit_index(change)

    @classmethod
    def init_patch(cls, path: str | os.PathLike[str]) -> Toolbox:
        """Create (or complete) the runtime's layout at `path`: tools/, runs/, index.json and
        config.json (`{}` when new), as the runtime's ensureLayout does; returns the toolbox."""
        root = Path(path).expanduser()
        (root / TOOLS_DIR_NAME).mkdir(parents=True, exist_ok=True)
        (root / "runs").mkdir(exist_ok=True)
        for name in (INDEX_NAME, "config.json"):
            if not (root / name).exists():
                atomic_write(root / name, b"{}\n")
        return cls(root.resolve(), root.resolve() / TOOLS_DIR_NAME, True)

    # -- managing tools -------------------------------------------------------------------

    def create_tool(
        self, name: str, description: str | None = None, text: str | None = None
    ) -> Path:
        """A new tool file from the template (or `text`), refusing to replace an existing one."""
        _check_name(name)
        target = self.path_for(name)
        if target.exists() or self.find(name) is not None:
            raise ToolboxError(f"a tool named {name} already exists")
        data = _to_bytes(text if text is not None else new_tool_text(name, description))
        atomic_write(target, data)
        self._index_from_bytes(target, data)
        return target

    def _renamed_text(self, path: Path, new_name: str) -> bytes:
        from patch_tui.format import toolfile

        raw = path.read_bytes()
        tf = toolfile.parse_bytes(raw, path=str(path))
        if not isinstance(tf.data, dict) or any(
            p.code in toolfile.STRUCTURE_CODES for p in tf.problems
        ):
            # The manifest cannot be rewritten; the file moves with its text unchanged.
            return raw
        text = toolfile.with_frontmatter(tf, toolfile.set_field(tf.data, ("name",), new_name))
        return ((toolfile.BOM if tf.bom else "") + text).encode("utf-8")

    def duplicate_tool(self, path: str | os.PathLike[str], new_name: str) -> Path:
        _check_name(new_name)
        src = Path(path)
        target = self.path_for(new_name)
        if target.exists() or self.find(new_name) is not None:
            raise ToolboxError(f"a tool named {new_name} already exists")
        data = self._renamed_text(src, new_name)
        atomic_write(target, data)
        self._index_from_bytes(target, data)
        return target

    def rename_tool(self, path: str | os.PathLike[str], new_name: str) -> Path:
        """Give a tool a new name: the manifest's name and the file's name change together."""
        _check_name(new_name)
        src = Path(path)
        old_name = _manifest_name(src) or src.stem
        target = self.path_for(new_name)
        if target.exists() and target.resolve() != src.resolve():
            raise ToolboxError(f"a tool named {new_name} already exists")
        data = self._renamed_text(src, new_name)
        atomic_write(target, data)
        if target.resolve() != src.resolve():
            _note_own_write(src, None)
            src.unlink()
            _fsync_dir(src.parent)
        if self.is_patch_toolbox:
            carry = self.index_entries().get(old_name)
            self.remove_from_index(old_name)
            manifest = _runtime_manifest(data)
            if manifest is not None:
                self._edit_index(lambda index: _upsert(index, manifest, target, carry))
        return target

    def delete_tool(self, path: str | os.PathLike[str]) -> Path:
        """Move a tool to the trash folder (never delete bytes). Returns where it went."""
        src = Path(path)
        name = _manifest_name(src)
        self.trash_dir.mkdir(parents=True, exist_ok=True)
        dest = self.trash_dir / f"{src.stem}-{_utc_stamp()}.py"
        n = 1
        while dest.exists():
            dest = self.trash_dir / f"{src.stem}-{_utc_stamp()}-{n}.py"
            n += 1
        _note_own_write(src, None)
        if _same_device(src, self.trash_dir):
            os.replace(src, dest)
        else:
            _copy_then_unlink(src, dest)
        _fsync_dir(src.parent)
        if self.is_patch_toolbox:
            self._drop_entries_for(src)
            if name and name in self.index_entries():
                entry = self.index_entries()[name]
                if not (
                    isinstance(entry, dict)
                    and isinstance(entry.get("filePath"), str)
                    and Path(entry["filePath"]).exists()
                ):
                    self.remove_from_index(name)
        return dest


# --- helpers -------------------------------------------------------------------------------


def _manifest_name(path: Path) -> str | None:
    from patch_tui.format import toolfile

    try:
        tf = toolfile.read(str(path))
    except OSError:
        return None
    if isinstance(tf.data, dict) and isinstance(tf.data.get("name"), str):
        return tf.data["name"]
    return None


def _version_key(version: str) -> tuple[int, ...]:
    parts = version.split("+")[0].split(".")
    try:
        return tuple(int(x) for x in parts)
    except ValueError:
        return (-1,)


def _same_device(a: Path, folder: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(folder).st_dev
    except OSError:
        return False


def _copy_then_unlink(src: Path, dest: Path) -> None:
    atomic_write(dest, src.read_bytes())
    src.unlink()
