"""Every body rule (PT030-PT046): a realistic failing case at the right line with a message that
says what to do, a passing case, and quick fixes that make the diagnostic go away."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest
from lintkit import CLEAN, edit, line_of

from patch_tui.format import toolfile
from patch_tui.lint.analysis import analyse
from patch_tui.lint.engine import Diagnostic, apply_edits, fix_text, lint_text, selected_rules

BODY_RULES = selected_rules(("PT03", "PT04"))
GUARD = """

if __name__ == "__main__":
    args = json.loads(sys.stdin.read())
    print(json.dumps(main(**args)))
"""


def tool(
    body: str,
    *,
    inputs: list[dict] | None = None,
    network: bool = False,
    filesystem: str = "none",
    human_confirm: bool = False,
    packages: list[str] | None = None,
    external_auth: list[str] | None = None,
    guard: bool = True,
) -> str:
    """A tool file with a canonical manifest around `body` (plus the standard entry point)."""
    data: dict = {
        "name": "demo_tool",
        "version": "1.0.0",
        "description": "A tool used by the tests.",
        "inputs": inputs or [],
        "outputs": {"type": "object"},
        "capabilities": {
            "network": network,
            "filesystem": filesystem,
            "human_confirm": human_confirm,
        },
        "runtime": {"language": "python", "python_version": "3.12", "packages": packages or []},
    }
    if external_auth is not None:
        data["external_auth"] = external_auth
    return (
        "# ---\n"
        + toolfile.render_frontmatter(data)
        + "# ---\n"
        + body.lstrip("\n")
        + (GUARD if guard else "")
    )


def inp(name: str, type_: str = "string", **extra: object) -> dict:
    return {"name": name, "type": type_, "description": f"The {name}.", **extra}


def body_diags(text: str, code: str | None = None) -> list[Diagnostic]:
    found = lint_text(text, rules=BODY_RULES)
    return [d for d in found if code is None or d.code == code]


def one(text: str, code: str) -> Diagnostic:
    found = body_diags(text, code)
    assert len(found) == 1, found
    return found[0]


def apply(text: str, d: Diagnostic) -> str:
    assert d.fix is not None, d
    return apply_edits(text, d.fix.edits)


def assert_fixed(text: str, d: Diagnostic) -> str:
    """Apply d's fix: the file stays parseable and that diagnostic is gone."""
    new = apply(text, d)
    assert toolfile.parse(new).data is not None
    assert [x for x in body_diags(new, d.code) if x.message == d.message] == []
    return new


SIMPLE = """
import json
import sys


def main(text: str) -> dict:
    return {"n": len(text)}
"""


def test_clean_tools_have_no_body_diagnostics() -> None:
    assert body_diags(CLEAN) == []
    assert body_diags(tool(SIMPLE, inputs=[inp("name")]).replace("text", "name")) == []


# --- PT030 ------------------------------------------------------------------------------------


def test_pt030_syntax_error_at_its_file_position() -> None:
    text = tool(
        "import json\nimport sys\n\ndef main(text: str) -> dict\n    return {}\n",
        inputs=[inp("text", tainted_ok=True)],
    )
    d = one(text, "PT030")
    assert d.severity == "error"
    assert d.line == line_of(text, "def main(text: str) -> dict")
    assert d.column >= 1
    assert "not valid Python" in d.message and "expected ':'" in d.message
    # Nothing else about the body is claimed while it does not parse.
    assert [x.code for x in body_diags(text)] == ["PT030"]


def test_pt030_runs_even_when_the_frontmatter_is_broken() -> None:
    text = "# ---\n# name: [x\n# ---\ndef main(:\n    pass\n"
    d = one(text, "PT030")
    assert d.line == 4


def test_pt030_error_at_end_of_file_points_at_a_real_line() -> None:
    text = '# ---\n# name: x\n# ---\nx = """never closed\n\n'
    d = one(text, "PT030")
    assert d.line == 4 and "unterminated" in d.message


def test_pt030_passes_on_valid_python() -> None:
    assert body_diags(tool(SIMPLE, inputs=[inp("text", tainted_ok=True)]), "PT030") == []


# --- PT031 ------------------------------------------------------------------------------------


def test_pt031_no_main() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef run(text: str) -> dict:\n    return {}\n", guard=False
    )
    d = one(text, "PT031")
    assert d.line == line_of(text, "import json")
    assert "def main" in d.message


def test_pt031_async_main_and_nested_main() -> None:
    text = tool("import json\nimport sys\n\n\nasync def main() -> dict:\n    return {}\n")
    d = one(text, "PT031")
    assert d.line == line_of(text, "async def main")
    assert "asyncio.run" in d.message
    nested = tool(
        "import json\nimport sys\n\n\nclass Tool:\n    def main(self) -> dict:\n        return {}\n"
    )
    d = one(nested, "PT031")
    assert d.line == line_of(nested, "def main(self)")
    assert "top-level" in d.message


def test_pt031_passes_with_a_top_level_main() -> None:
    assert body_diags(CLEAN, "PT031") == []


# --- PT032 ------------------------------------------------------------------------------------


def test_pt032_param_without_input_and_fix_adds_it() -> None:
    text = edit(
        "def main(text: str, separators: list | None = None) -> dict:",
        "def main(text: str, separators: list | None = None, limit: int = 3) -> dict:",
    )
    d = one(text, "PT032")
    assert d.line == line_of(text, "def main(")
    assert d.column == 1
    assert "`limit`" in d.message and "add it to inputs" in d.message
    assert d.fix is not None and d.fix.safe
    new = assert_fixed(text, d)
    added = toolfile.parse(new).data["inputs"][-1]
    assert added["name"] == "limit"
    assert added["type"] == "integer"
    assert added["required"] is False and added["default"] == 3
    assert body_diags(new, "PT032") == []


def test_pt032_array_param_gets_items() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(tags: list[int]) -> dict:\n    return {}\n",
    )
    d = one(text, "PT032")
    new = assert_fixed(text, d)
    [added] = toolfile.parse(new).data["inputs"]
    assert added == {
        "name": "tags",
        "type": "array",
        "description": "The tags.",
        "items": {"type": "integer"},
    }


def test_pt032_input_not_a_parameter() -> None:
    text = edit("def main(text: str, separators: list | None = None)", "def main(text: str)")
    d = one(text, "PT032")
    assert "`separators`" in d.message and "main(**args)" in d.message
    # The code has to change, not the manifest: the fix adds the parameter to main() (issue 25),
    # not safe (the body must then use it).
    assert d.fix is not None and not d.fix.safe and "main()'s signature" in d.fix.title


def test_pt032_positional_only_parameter() -> None:
    text = edit("def main(text: str, separators", "def main(text: str, /, separators")
    d = one(text, "PT032")
    assert "positional-only" in d.message and "`text`" in d.message


def test_pt032_passes_when_kwargs_swallow_extra_inputs() -> None:
    text = edit(
        "def main(text: str, separators: list | None = None)", "def main(text: str, **options)"
    )
    assert body_diags(text, "PT032") == []
    assert body_diags(CLEAN, "PT032") == []


# --- PT033 / PT034 ----------------------------------------------------------------------------


def test_pt033_optional_input_without_default_and_fix() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(text: str, limit: int) -> dict:\n    return {}\n",
        inputs=[inp("text", tainted_ok=True), inp("limit", "integer", required=False, default=5)],
    )
    d = one(text, "PT033")
    assert d.line == line_of(text, "def main(")
    assert d.column == len("def main(text: str, ") + 1
    assert "`limit`" in d.message and "add a default" in d.message
    assert d.fix is not None and d.fix.safe
    new = assert_fixed(text, d)
    assert "def main(text: str, limit: int = 5) -> dict:" in new
    assert body_diags(new) == []


def test_pt033_no_fix_when_a_default_would_break_the_signature() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(limit: int, text: str) -> dict:\n    return {}\n",
        inputs=[inp("limit", "integer", required=False, default=5), inp("text", tainted_ok=True)],
    )
    assert one(text, "PT033").fix is None


def test_pt033_passes_with_a_default() -> None:
    assert body_diags(CLEAN, "PT033") == []


def test_pt034_required_input_with_default() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(count: int = 2) -> dict:\n    return {}\n",
        inputs=[inp("count", "integer")],
    )
    d = one(text, "PT034")
    assert d.severity == "warning"
    assert (d.line, d.column) == (line_of(text, "def main("), len("def main(count: int = ") + 1)
    assert "required: false" in d.message
    assert d.fix is not None and not d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["inputs"][0] == {
        "name": "count",
        "type": "integer",
        "description": "The count.",
        "required": False,
        "default": 2,
    }
    assert body_diags(CLEAN, "PT034") == []


# --- PT035 ------------------------------------------------------------------------------------


def test_pt035_annotation_disagrees_with_type() -> None:
    text = edit("def main(text: str,", "def main(text: int,")
    d = one(text, "PT035")
    assert d.severity == "warning"
    assert (d.line, d.column) == (line_of(text, "def main("), len("def main(text: ") + 1)
    assert "`int`" in d.message and "`string`" in d.message and "`str`" in d.message
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["inputs"][0]["type"] == "integer"


def test_pt035_list_items_disagree() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(ids: list[int]) -> dict:\n    return {}\n",
        inputs=[inp("ids", "array", items={"type": "string"})],
    )
    d = one(text, "PT035")
    assert "list[str]" in d.message


@pytest.mark.parametrize(
    ("annotation", "declared"),
    [
        ("int | None", "integer"),
        ("Optional[int]", "integer"),
        ("float", "integer"),
        ("list[str]", "array"),
        ("dict[str, Any]", "object"),
        ("Any", "number"),
        ('Literal["a", "b"]', "string"),
        ("Path", "string"),
    ],
)
def test_pt035_passes_on_compatible_annotations(annotation: str, declared: str) -> None:
    items = {"items": {"type": "string"}} if declared == "array" else {}
    text = tool(
        "import json\nimport sys\nfrom pathlib import Path\nfrom typing import Any, Literal, Optional\n\n\n"
        f"def main(value: {annotation}) -> dict:\n    return {{}}\n",
        inputs=[inp("value", declared, **items)],
    )
    assert body_diags(text, "PT035") == []


# --- PT036 ------------------------------------------------------------------------------------


def test_pt036_missing_guard_fix_makes_a_runnable_tool(tmp_path) -> None:
    text = tool(
        "def main(text: str) -> dict:\n    return {'n': len(text)}\n",
        inputs=[inp("text", tainted_ok=True)],
        guard=False,
    )
    d = one(text, "PT036")
    assert d.line == line_of(text, "def main(")
    assert 'if __name__ == "__main__"' in d.message
    assert d.fix is not None and d.fix.safe
    new = assert_fixed(text, d)
    assert body_diags(new) == []
    path = tmp_path / "t.py"
    path.write_text(new)
    out = subprocess.run(
        [sys.executable, str(path)],
        input='{"text": "hello"}',
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == {"n": 5}


def test_pt036_guard_that_does_not_speak_json() -> None:
    text = CLEAN.replace("    print(json.dumps(main(**args)))", "    main(**args)")
    d = one(text, "PT036")
    assert d.line == line_of(text, "if __name__")
    assert "print the result as JSON" in d.message
    text = CLEAN.replace("args = json.loads(sys.stdin.read())", 'args = {"text": sys.argv[1]}')
    assert "read the args as JSON from stdin" in one(text, "PT036").message
    text = CLEAN.replace("main(**args)", 'main(args["text"])')
    assert "main(**args)" in one(text, "PT036").message


@pytest.mark.parametrize(
    "guard",
    [
        'if __name__ == "__main__":\n    print(json.dumps(main(**json.load(sys.stdin))))\n',
        "if '__main__' == __name__:\n    raw = sys.stdin.read()\n    args = json.loads(raw or '{}')\n"
        "    result = main(**args)\n    sys.stdout.write(json.dumps(result) + '\\n')\n",
        "def _run() -> None:\n    args = json.loads(sys.stdin.read())\n    print(json.dumps(main(**args)))\n\n\n"
        'if __name__ == "__main__":\n    _run()\n',
    ],
)
def test_pt036_accepts_equivalent_spellings(guard: str) -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(text: str) -> dict:\n    return {}\n\n\n" + guard,
        inputs=[inp("text", tainted_ok=True)],
        guard=False,
    )
    assert body_diags(text) == []


# --- PT037 ------------------------------------------------------------------------------------


def test_pt037_work_at_import_time() -> None:
    body = SIMPLE.replace(
        "\n\ndef main",
        '\nprint("loading")\nDATA = open("/etc/hosts").read()\nfor i in range(3):\n    pass\n\n\ndef main',
    )
    text = tool(body, inputs=[inp("text", tainted_ok=True)], filesystem="read-only")
    found = body_diags(text, "PT037")
    assert [d.line for d in found] == [
        line_of(text, 'print("loading")'),
        line_of(text, "DATA = open"),
        line_of(text, "for i in range"),
    ]
    assert all("move it into main()" in d.message for d in found)
    assert '`print("loading")`' in found[0].message


def test_pt037_allows_constants_defs_and_optional_imports() -> None:
    body = '''
"""A docstring."""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field

import pydantic

try:
    import tomllib
except ImportError:
    tomllib = None

WORD_RE = re.compile(r"\\w+")
LIMITS = {"max": 10, "min": -1}
STOP = frozenset("a an the".split())
NAMES: tuple[str, ...] = ("x", "y")
LOWER = STOP | {w.upper() for w in STOP}


class Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    size: int = pydantic.Field(default=3, ge=0)


@dataclass(frozen=True)
class Options:
    size: int = 3
    tags: list = field(default_factory=list)


DEFAULTS = Options()


def main(text: str) -> dict:
    return {"n": len(WORD_RE.findall(text))}
'''
    text = tool(body, inputs=[inp("text", tainted_ok=True)], packages=["pydantic==2.7.0"])
    assert body_diags(text) == []


# --- PT040 ------------------------------------------------------------------------------------


def test_pt040_network_with_network_false() -> None:
    body = SIMPLE.replace("import sys\n", "import sys\nfrom urllib import request\n")
    text = tool(body, inputs=[inp("text", tainted_ok=True)])
    d = one(text, "PT040")
    assert d.line == line_of(text, "from urllib import request")
    assert "`urllib.request`" in d.message and "network: true" in d.message
    assert d.fix is not None and not d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["capabilities"]["network"] is True


def test_pt040_passes() -> None:
    body = SIMPLE.replace("import sys\n", "import sys\nimport urllib.parse\nimport socket as s\n")
    assert body_diags(tool(body, inputs=[inp("text", tainted_ok=True)]), "PT040") != []  # socket
    body = SIMPLE.replace("import sys\n", "import sys\nimport urllib.parse\n")
    assert body_diags(tool(body, inputs=[inp("text", tainted_ok=True)]), "PT040") == []
    body = SIMPLE.replace("import sys\n", "import sys\nimport http.client\n")
    assert (
        body_diags(tool(body, inputs=[inp("text", tainted_ok=True)], network=True), "PT040") == []
    )


# --- PT041 ------------------------------------------------------------------------------------

READER = """
import json
import sys
from pathlib import Path


def main(path: str) -> dict:
    with open(path) as fh:
        first = fh.readline()
    size = Path(path).stat().st_size
    return {"first": first.replace("a", "b"), "size": size}
"""
WRITER = """
import json
import os
import sys
from pathlib import Path


def main(path: str) -> dict:
    target = Path(path)
    with open(path, "w") as fh:
        fh.write("x")
    target.rename(path + ".bak")
    os.remove(path + ".bak")
    return {}
"""


def test_pt041_any_access_with_filesystem_none() -> None:
    text = tool(READER, inputs=[inp("path")])
    found = body_diags(text, "PT041")
    assert [d.line for d in found] == [
        line_of(text, "with open(path)"),
        line_of(text, "size = Path"),
    ]
    assert "`none`" in found[0].message and "filesystem: read-only" in found[0].message
    new = assert_fixed(text, found[0])
    assert body_diags(new, "PT041") == []


def test_pt041_writes_with_read_only() -> None:
    text = tool(WRITER, inputs=[inp("path")], filesystem="read-only")
    found = body_diags(text, "PT041")
    assert [(d.line, d.message.split("`")[1]) for d in found] == [
        (line_of(text, 'open(path, "w")'), "open(..., 'w')"),
        (line_of(text, "target.rename"), "Path.rename()"),
        (line_of(text, "os.remove"), "os.remove()"),
    ]
    assert "writes files" in found[0].message and "moves files" in found[1].message
    assert "deletes files" in found[2].message
    assert all("read-write" in d.message for d in found)


def test_pt041_passes() -> None:
    assert body_diags(tool(READER, inputs=[inp("path")], filesystem="read-only"), "PT041") == []
    assert (
        body_diags(
            tool(WRITER, inputs=[inp("path")], filesystem="read-write", human_confirm=True), "PT041"
        )
        == []
    )
    # str.replace and dict.get are not file access, even with pathlib imported.
    assert body_diags(CLEAN, "PT041") == []


# --- PT042 ------------------------------------------------------------------------------------


def test_pt042_subprocess_and_eval() -> None:
    body = SIMPLE.replace("import sys\n", "import subprocess\nimport sys\n").replace(
        '    return {"n": len(text)}',
        '    out = subprocess.run(["wc", "-w"], input=text, capture_output=True, text=True)\n'
        '    return {"n": eval(out.stdout)}',
    )
    text = tool(body, inputs=[inp("text", tainted_ok=True)])
    found = body_diags(text, "PT042")
    assert [(d.line, d.severity) for d in found] == [
        (line_of(text, "subprocess.run"), "warning"),
        (line_of(text, "eval("), "warning"),
    ]
    assert "another program" in found[0].message
    assert "ast.literal_eval" in found[1].message


def test_pt042_passes_on_literal_eval() -> None:
    body = SIMPLE.replace("import sys\n", "import ast\nimport sys\n").replace(
        "len(text)", "ast.literal_eval(text)"
    )
    assert body_diags(tool(body, inputs=[inp("text", tainted_ok=True)]), "PT042") == []


# --- PT043 ------------------------------------------------------------------------------------


def test_pt043_undeclared_import_with_pin_fix() -> None:
    body = SIMPLE.replace("import sys\n", "import sys\n\nimport yaml\n").replace(
        "len(text)", "len(yaml.safe_load(text))"
    )
    text = tool(body, inputs=[inp("text", tainted_ok=True)])
    d = one(text, "PT043")
    assert d.severity == "error" and d.line == line_of(text, "import yaml")
    pin = f"pyyaml=={version('pyyaml')}"
    assert "`pyyaml`" in d.message and pin in d.message
    assert d.fix is not None and d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["runtime"]["packages"] == [pin]
    assert body_diags(new, "PT043") == []


def test_pt043_unknown_package_has_no_fix() -> None:
    body = SIMPLE.replace("import sys\n", "import sys\n\nfrom bs4 import BeautifulSoup\n")
    text = tool(body, inputs=[inp("text", tainted_ok=True)])
    d = one(text, "PT043")
    assert "beautifulsoup4" in d.message
    assert d.fix is None or "beautifulsoup4==" in apply(text, d)


def test_pt043_declared_package_never_imported() -> None:
    text = tool(SIMPLE, inputs=[inp("text", tainted_ok=True)], packages=["numpy==1.26.4"])
    d = one(text, "PT043")
    assert d.severity == "warning"
    assert d.line == line_of(text, "numpy==1.26.4")
    assert "never imported" in d.message
    assert d.fix is not None and not d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["runtime"]["packages"] == []


def test_pt043_passes_with_mapped_and_string_named_packages() -> None:
    body = SIMPLE.replace(
        "import sys\n", "import sys\n\nfrom bs4 import BeautifulSoup\nfrom PIL import Image\n"
    ).replace("len(text)", 'len(BeautifulSoup(text, "lxml").text) + len(str(Image))')
    packages = ["beautifulsoup4==4.12.3", "lxml==5.2.2", "Pillow==10.3.0"]
    assert (
        body_diags(tool(body, inputs=[inp("text", tainted_ok=True)], packages=packages), "PT043")
        == []
    )
    optional = SIMPLE.replace(
        "import sys\n",
        "import sys\n\ntry:\n    import orjson\nexcept ImportError:\n    orjson = None\n",
    )
    assert body_diags(tool(optional, inputs=[inp("text", tainted_ok=True)]), "PT043") == []


# --- PT044 ------------------------------------------------------------------------------------

TOKEN_BODY = """
import json
import os
import sys


def main(text: str) -> dict:
    token = os.environ["PATCH_ACCESS_TOKEN"]
    return {"n": len(text), "auth": bool(token)}
"""


def test_pt044_token_without_external_auth() -> None:
    text = tool(TOKEN_BODY, inputs=[inp("text", tainted_ok=True)])
    d = one(text, "PT044")
    assert d.severity == "error"
    assert (d.line, d.column) == (line_of(text, "token = "), len("    token = ") + 1)
    assert "external_auth" in d.message


@pytest.mark.parametrize(
    "read",
    [
        'os.getenv("PATCH_ACCESS_TOKEN")',
        'os.environ.get("PATCH_ACCESS_TOKEN", "")',
        "environ[NAME]",
    ],
)
def test_pt044_sees_every_spelling_of_the_read(read: str) -> None:
    body = TOKEN_BODY.replace('os.environ["PATCH_ACCESS_TOKEN"]', read).replace(
        "import sys\n", 'import sys\nfrom os import environ\n\nNAME = "PATCH_ACCESS_TOKEN"\n'
    )
    assert body_diags(tool(body, inputs=[inp("text", tainted_ok=True)]), "PT044") != []
    ok = tool(body, inputs=[inp("text", tainted_ok=True)], external_auth=["github.repo"])
    assert body_diags(ok, "PT044") == []


def test_pt044_external_auth_never_read() -> None:
    text = tool(SIMPLE, inputs=[inp("text", tainted_ok=True)], external_auth=["gmail.read"])
    d = one(text, "PT044")
    assert d.severity == "warning"
    assert d.line == line_of(text, "external_auth:")
    assert "`gmail.read`" in d.message and "PATCH_ACCESS_TOKEN" in d.message


# --- PT045 ------------------------------------------------------------------------------------

POSTER = """
import json
import sys

import requests


def main(text: str) -> dict:
    words = text.split()
    words.remove(words[0])
    requests.post("https://example.com/hook", json={"words": words})
    return {"ok": True}
"""


def test_pt045_irreversible_without_confirm_and_fix() -> None:
    text = tool(
        POSTER, inputs=[inp("text", tainted_ok=True)], network=True, packages=["requests==2.32.3"]
    )
    d = one(text, "PT045")
    assert d.severity == "warning"
    assert (d.line, d.column) == (line_of(text, "requests.post"), 5)
    assert "`requests.post`" in d.message and "human_confirm: true" in d.message
    assert d.fix is not None and d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["capabilities"]["human_confirm"] is True
    # `lint --fix` applies it too.
    fixed, applied = fix_text(text, BODY_RULES)
    assert applied == 1 and body_diags(fixed) == []


def test_pt045_file_deletes_with_read_write_and_sql() -> None:
    text = tool(WRITER, inputs=[inp("path")], filesystem="read-write")
    d = one(text, "PT045")
    assert d.line == line_of(text, 'open(path, "w")')
    assert "and 2 more" in d.message
    sql = SIMPLE.replace("import sys\n", "import sqlite3\nimport sys\n").replace(
        '    return {"n": len(text)}',
        '    db = sqlite3.connect(":memory:")\n    db.execute("DELETE FROM notes WHERE id = ?", (text,))\n    return {}',
    )
    d = one(tool(sql, inputs=[inp("text", tainted_ok=True)], filesystem="read-write"), "PT045")
    assert "SQL DELETE" in d.message


def test_pt045_api_client_verbs_in_a_network_tool() -> None:
    body = POSTER.replace("import requests", "import boto3").replace(
        '    requests.post("https://example.com/hook", json={"words": words})',
        '    frame.drop_duplicates()\n    s3 = boto3.client("s3")\n    s3.put_object(Bucket="b", Key=text, Body=b"")',
    )
    text = tool(
        body, inputs=[inp("text", tainted_ok=True)], network=True, packages=["boto3==1.34.0"]
    )
    d = one(text, "PT045")
    assert d.line == line_of(text, "s3.put_object") and "`s3.put_object`" in d.message
    assert "more" not in d.message  # words.remove(...) and frame.drop_duplicates() do not count


def test_pt045_passes_on_in_memory_verbs_and_with_confirm() -> None:
    body = (
        SIMPLE.replace(
            '    return {"n": len(text)}',
            "    words = text.split()\n    words.remove(words[0])\n    seen = {}\n    seen.pop('x', None)\n"
            "    words = post_process(words)\n"
            '    return {"n": len(words)}',
        )
        + "\n\ndef post_process(words: list) -> list:\n    return words\n"
    )
    assert body_diags(tool(body, inputs=[inp("text", tainted_ok=True)]), "PT045") == []
    text = tool(
        POSTER,
        inputs=[inp("text", tainted_ok=True)],
        network=True,
        human_confirm=True,
        packages=["requests==2.32.3"],
    )
    assert body_diags(text) == []


# --- PT046 ------------------------------------------------------------------------------------


def test_pt046_outside_content_without_tainted_ok() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main(page_url: str, max_text: int = 3) -> dict:\n    return {}\n",
        inputs=[inp("page_url"), inp("max_text", "integer", required=False, default=3)],
    )
    d = one(text, "PT046")
    assert d.severity == "warning"
    assert (d.line, d.column) == (line_of(text, "name: page_url"), len("#   - name: ") + 1)
    assert "`page_url`" in d.message and "tainted_ok: true" in d.message
    assert d.fix is not None and not d.fix.safe
    new = assert_fixed(text, d)
    assert toolfile.parse(new).data["inputs"][0]["tainted_ok"] is True
    assert body_diags(new) == []


def test_pt046_passes() -> None:
    assert body_diags(CLEAN, "PT046") == []
    text = tool(
        "import json\nimport sys\n\n\n"
        "def main(path: str, count: int, message_id: str, input_path: str, text_format: str) -> dict:\n"
        "    return {}\n",
        inputs=[
            inp("path"),
            inp("count", "integer"),
            inp("message_id"),
            inp("input_path"),
            inp("text_format"),
        ],
    )
    assert body_diags(text, "PT046") == []


# --- the one pass -----------------------------------------------------------------------------


def test_facts_survive_a_huge_expression_and_deep_nesting() -> None:
    expr = " + ".join(["1"] * 20000)
    text = tool(f"import json\nimport sys\n\n\ndef main() -> dict:\n    return {{'n': {expr}}}\n")
    found = body_diags(text)
    assert all(d.code != "PT000" for d in found), found


def test_every_body_rule_has_a_docs_entry() -> None:
    for r in BODY_RULES:
        doc = r.func.__doc__ or ""
        assert "Why:" in doc and "Fix:" in doc, r.code
        assert doc.strip().splitlines()[0].strip()


def test_analyse_resolves_aliases() -> None:
    import ast

    tree = ast.parse(
        "import urllib.request as ur\nfrom os import remove as rm\nfrom shutil import rmtree\n"
        "def main(p):\n    ur.urlopen(p)\n    rm(p)\n    rmtree(p)\n"
    )
    facts = analyse(tree)
    assert list(facts.network) == ["urllib.request"]
    assert [(u.what, u.kind) for u in facts.file_access] == [
        ("os.remove()", "delete"),
        ("shutil.rmtree()", "delete"),
    ]
    assert [u.what for u in facts.irreversible] == ["os.remove", "shutil.rmtree"]


def test_columns_count_characters_not_bytes() -> None:
    body = SIMPLE.replace(
        '    return {"n": len(text)}',
        '    label = "héllo wörld"; value = eval(text)\n    return {"n": value}',
    )
    text = tool(body, inputs=[inp("text", tainted_ok=True)])
    d = one(text, "PT042")
    line = text.splitlines()[d.line - 1]
    assert line[d.column - 1 : d.span.end_column - 1] == "eval(text)"


def test_guard_fix_keeps_crlf_line_endings() -> None:
    text = tool(
        "import json\nimport sys\n\n\ndef main() -> dict:\n    return {}\n", guard=False
    ).replace("\n", "\r\n")
    d = one(text, "PT036")
    new = assert_fixed(text, d)
    assert "\n" not in new.replace("\r\n", "")
    assert new.endswith("    print(json.dumps(main(**args)))\r\n")
    assert '\r\n\r\n\r\nif __name__ == "__main__":\r\n' in new


@pytest.mark.parametrize(
    "main",
    [
        "def main(p: " + " | ".join(["int"] * 3000) + ") -> dict:\n    return {}\n",
        "def main(p: str) -> dict:\n    x = Path(p)"
        + ".resolve()" * 3000
        + "\n    x.unlink()\n    return {}\n",
        "def main(p: str) -> dict:\n    return " + "[" * 150 + "]" * 150 + "\n",
        "def main(p: str) -> dict:\n    return {'x': a" + ".b" * 5000 + "}\n",
    ],
    ids=["long-union", "long-chain", "deep-list", "long-attribute"],
)
def test_hostile_bodies_give_diagnostics_not_internal_errors(main: str) -> None:
    text = tool(
        "import json\nimport sys\nfrom pathlib import Path\n\n\n" + main,
        inputs=[inp("p", "integer")],
    )
    assert all(d.code != "PT000" for d in lint_text(text)), [
        d for d in lint_text(text) if d.code == "PT000"
    ]


def test_body_diagnostics_name_the_manifest_field_they_concern() -> None:
    text = tool(POSTER, inputs=[inp("text", tainted_ok=True)], packages=["requests==2.32.3"])
    fields = {d.code: d.field for d in body_diags(text)}
    assert fields == {
        "PT040": ("capabilities", "network"),
        "PT045": ("capabilities", "human_confirm"),
    }
    # ...while the span stays on the code.
    assert one(text, "PT040").line == line_of(text, "import requests")


def test_import_names_map_to_distributions() -> None:
    from patch_tui.lint import distributions as d

    assert d.distribution_for("bs4") == "beautifulsoup4"
    assert d.distribution_for("google.protobuf.json_format") == "protobuf"
    assert d.distribution_for("sklearn.linear_model") == "scikit-learn"
    assert d.distribution_for("my_pkg.sub") == "my-pkg"
    assert d.declared_name("Pillow==10.3.0") == "Pillow" and d.normalize("Pillow") == "pillow"
    assert d.is_stdlib("urllib.request") and not d.is_stdlib("requests")
    assert d.installed_version("pyyaml") == version("pyyaml")
    assert d.installed_version("surely-not-installed-dist") is None


@pytest.mark.parametrize(
    "raw",
    [b"", b"\n\n", bytes(range(256)), b"# name: \xff\n"],
    ids=["empty", "blank", "binary", "bad-utf8"],
)
def test_files_that_are_not_tools_get_only_the_structure_error(raw: bytes) -> None:
    from patch_tui.lint.engine import lint_toolfile

    codes = {d.code for d in lint_toolfile(toolfile.parse_bytes(raw))}
    assert codes == {"PT001"}


def test_empty_body_diagnostics_point_inside_the_file() -> None:
    # A tool whose body is empty: editors and the lint panel must be able to jump to every span.
    text = CLEAN[: CLEAN.index("# ---", CLEAN.index("# ---") + 1)] + "# ---\n"
    last = text.count("\n")
    diags = lint_text(text)
    assert {"PT031", "PT036"} <= {d.code for d in diags}
    assert all(1 <= d.span.line <= last and d.span.end_line <= last for d in diags)
