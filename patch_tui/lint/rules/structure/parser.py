"""PT001-PT003: the problems the parser finds itself (markers, YAML, uncommented lines).

The parser (format/toolfile.py) reports them; these rules make them selectable and
documented, and PT001 offers a starter manifest for a file without one.
"""

from __future__ import annotations

from pathlib import PurePath

from patch_tui.format.fields import NAME_RE
from patch_tui.format.templates import TOOL_DESCRIPTION
from patch_tui.format.toolfile import ProblemCode, ToolFile
from patch_tui.lint.diagnostic import Edit, Fix
from patch_tui.lint.rule import Rule

# The parser finds these problems itself (format/toolfile.py); these rules make them
# selectable and documented, and report them.
PT001 = Rule(
    ProblemCode.MARKERS,
    "frontmatter-markers",
    family="structure",
    summary="no opening or no closing `# ---` marker",
    needs_manifest=False,
    fix="sometimes",
    doc="""No opening or no closing `# ---` marker (also: a binary or non-UTF-8 file).

Why: the Patch runtime finds the manifest between the first two lines that read `# ---`. Without
both markers it cannot read the tool at all, and nothing else can be checked.

Fix: put `# ---` on its own line, then the manifest as `# ` comment lines, then `# ---` again,
above the Python code. Save the file as UTF-8 text.""",
)


PT002 = Rule(
    ProblemCode.YAML,
    "invalid-yaml",
    family="structure",
    summary="frontmatter is not valid YAML, uses an unknown tag, or repeats a key",
    needs_manifest=False,
    doc="""The frontmatter is not valid YAML, uses a tag the runtime does not know, or repeats a key.

Why: the Patch runtime refuses a tool whose frontmatter is not valid YAML, repeats a key, or
uses a tag its JSON schema does not know (`!!timestamp`, `!!binary`, `!!python/object/apply`,
`!custom`; tags like the last run code in careless readers). The tags it knows (`!!str`,
`!!int`, `!!float`, `!!bool`, `!!null`, `!!seq`, `!!map`, `!`) are read as it reads them (PT025
warns).

Fix: correct the YAML at the reported line (indentation, a missing `:`, an unclosed quote).
Remove the tag, and keep only one of each key.""",
)


PT003 = Rule(
    ProblemCode.UNCOMMENTED,
    "uncommented-line",
    family="structure",
    summary="a line between the markers that is not a comment",
    needs_manifest=False,
    doc="""A line between the `# ---` markers that is not a `#` comment.

Why: the frontmatter must stay a Python comment so the file is still valid Python; an
uncommented line is both a YAML and a Python problem.

Fix: start the line with `# ` like the other manifest lines, or move it below the closing
marker.""",
)


@PT001.fixes_problems
def starter_manifest_fix(tf: ToolFile) -> Fix | None:
    """PT001's fix for a text file with no frontmatter at all: insert a starter manifest above
    the Python there (an empty file gets the whole starter tool), named after the file. None for a file the fix
    cannot help (binary, undecodable, or markers that are only unbalanced)."""
    from patch_tui.format import toolfile

    if tf.open_index is not None or not any(
        p.message == toolfile.NO_FRONTMATTER for p in tf.problems
    ):
        return None
    stem = PurePath(tf.path).stem if tf.path else ""
    name = stem if NAME_RE.match(stem) else "my_tool"
    data = {
        "name": name,
        "version": "0.1.0",
        "description": TOOL_DESCRIPTION.format(name=name),
        "inputs": [],
        "outputs": {"type": "object", "description": "The result."},
        "capabilities": {"network": False, "filesystem": "none", "human_confirm": False},
        "runtime": {"language": "python", "python_version": "3.12", "packages": []},
    }
    nl = tf.newline or "\n"
    if not tf.text.strip():
        # Nothing to keep: the whole starter tool (toolbox's template), which lints clean.
        from patch_tui.runtime.toolbox import new_tool_text

        return Fix("insert a starter tool", (Edit(1, 1, 1, 1, new_tool_text(name)),), safe=False)
    text = f"# ---{nl}{toolfile.render_frontmatter(data, nl)}# ---{nl}{nl}"
    # Not applied by `lint --fix`: the starter's description is a placeholder to write.
    return Fix("insert a starter manifest", (Edit(1, 1, 1, 1, text),), safe=False)
