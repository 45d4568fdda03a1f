"""What one widget of each kind costs in the first frame (why the desk's start-up is what it is).

    .venv/bin/python bench/widget_cost.py [--runs 7]

Each sample is a fresh interpreter running an app of 40 widgets of one kind in a VerticalScroll
(10 for the big ones), headless at 120x36, timed from building the app to the first frame it
writes (`App._display`), with the garbage collector off as `patch-tui` starts. Imports are done
before the clock starts, so this is the mount, style, layout and paint cost alone. The figure is
(best time - best time of the empty app) / count.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KINDS = {  # kind: how many of it
    "none": 40,
    "Static": 40,
    "Label": 40,
    "Input": 40,
    "Switch": 40,
    "Button": 40,
    "EnumField": 40,
    "labelled Label": 40,
    "labelled FieldInput": 40,
    "OptionList": 10,
    "DataTable": 10,
    "TextArea(300 lines)": 10,
}


def factory(kind: str) -> Any:
    """A function making the widgets of one sample (called in compose, inside the app)."""
    from textual.widgets import (
        Button,
        DataTable,
        Input,
        Label,
        OptionList,
        Static,
        Switch,
        TextArea,
    )

    from patch_tui.ui.desk.manifest_form import FieldColumn, FieldInput
    from patch_tui.ui.widgets.enum_field import EnumField

    sys.path.insert(0, str(REPO / "bench"))
    from tui_bench import tool_of

    text = tool_of(300)

    def labelled(widget: Any) -> Any:
        widget.field_label = "name"
        widget.add_class("field")
        return widget

    make = {
        "none": lambda i: [],
        "Static": lambda i: [Static(f"s{i}")],
        "Label": lambda i: [Label(f"l{i}")],
        "Input": lambda i: [Input(f"v{i}", compact=True)],
        "Switch": lambda i: [Switch(animate=False)],
        "Button": lambda i: [Button("x", compact=True)],
        "EnumField": lambda i: [EnumField(("a", "b"), value="a")],
        # A form field as the desk's form has it: the field, its label painted by its column.
        "labelled Label": lambda i: [labelled(Label("x"))],
        "labelled FieldInput": lambda i: [labelled(FieldInput("x", compact=True))],
        "OptionList": lambda i: [OptionList("a", "b")],
        "DataTable": lambda i: [DataTable()],
        "TextArea(300 lines)": lambda i: [TextArea(text, show_line_numbers=True)],
    }[kind]
    count = KINDS[kind]
    if kind.startswith("labelled"):
        return lambda: [FieldColumn(*(w for i in range(count) for w in make(i)))]
    return lambda: [w for i in range(count) for w in make(i)]


def child(kind: str) -> None:
    gc.disable()
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll

    make = factory(kind)  # imports happen here, before the clock starts

    class Many(App[None]):
        CSS = "Input, Switch, Button { height: 1; border: none; }"

        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield from make()

    app = Many()
    original = app._display
    first: list[float] = []

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        if renderable is not None and not first:
            first.append(time.perf_counter())
            app.call_later(app.exit)

    app._display = display  # type: ignore[method-assign]
    start = time.perf_counter()
    app.run(headless=True, size=(120, 36))
    os.write(1, f"{(first[0] - start) * 1000:.3f}\n".encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--child", choices=list(KINDS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    env = dict(os.environ, PYTHONPATH=str(REPO))
    best: dict[str, float] = {}
    for kind in KINDS:
        samples = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, __file__, "--child", kind],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            samples.append(float(out.stdout.strip().splitlines()[-1]))
        best[kind] = min(samples)
    for kind, ms in best.items():
        if kind == "none":
            print(f"{'empty app':22s} {ms:6.1f} ms to the first frame")
            continue
        print(f"{kind:22s} {(ms - best['none']) / KINDS[kind]:5.2f} ms each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
