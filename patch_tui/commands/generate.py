"""`patch-tui generate "PROMPT"`: write a new tool with Claude, headless.

Progress goes to stderr; the new file's path is the last line of stdout, so scripts can do
`path=$(patch-tui generate "...")`. Exit 0 when a clean tool was written, 1 when the result still
has lint errors (nothing written unless --keep-invalid), 2 on usage, key or API errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from patch_tui.untrusted.text_safety import visible


class _Progress:
    """Prints the engine's events on stderr: one line per round, a live counter on a TTY."""

    def __init__(self, stream: TextIO, model: str) -> None:
        self.stream = stream
        self.model = model
        self.live = stream.isatty()
        self.received = 0

    def line(self, text: str) -> None:
        if self.live and self.received:
            self.stream.write("\r\x1b[K")
        # The model id, its answers and the API's messages are untrusted: never raw to the terminal.
        self.stream.write(f"patch-tui: {visible(text)}\n")
        self.stream.flush()

    def __call__(self, event: object) -> None:
        from patch_tui.generate import engine as g

        if isinstance(event, g.RoundStarted):
            self.received = 0
            if event.kind == "repair":
                self.line(f"asking {self.model} to fix them (repair {event.round})")
            elif event.kind == "initial":
                self.line(f"writing the tool with {self.model}")
        elif isinstance(event, g.TextDelta):
            self.received += len(event.text)
            if self.live:
                self.stream.write(f"\r\x1b[K  {self.received} characters received")
                self.stream.flush()
        elif isinstance(event, g.UsageReported):
            self.line(f"{event.model} answered ({event.usage.summary()} tokens)")
        elif isinstance(event, g.Notice):
            self.line(event.message)
        elif isinstance(event, g.RoundChecked):
            errors = event.error_count
            if errors:
                self.line(f"lint found {errors} error{'s' if errors != 1 else ''}:")
                for d in event.diagnostics:
                    if d.severity == "error":
                        self.stream.write(f"  {visible(g.format_diagnostic(d))}\n")
            else:
                warnings = len(event.diagnostics)
                extra = f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""
                self.line(f"lint: no errors{extra}")


def _err(message: str) -> None:
    print(f"patch-tui: {visible(message)}", file=sys.stderr)


def run_generate(args: argparse.Namespace) -> int:
    import asyncio

    from patch_tui.generate import engine as g
    from patch_tui.settings import paths
    from patch_tui.settings.config import ConfigError, load_settings

    if args.max_repairs is not None and args.max_repairs < 0:
        _err("--max-repairs must be 0 or more")
        return 2
    if not args.prompt.strip():
        _err("the prompt is empty: describe the tool in a sentence")
        return 2
    try:
        settings = load_settings()
    except ConfigError as exc:
        _err(f"{exc}")
        return 2
    opts = g.resolve_options(settings, model=args.model, max_repairs=args.max_repairs)
    if not opts.api_key:
        _err(f"{g.no_key_error()}")
        return 2
    out = Path(args.out).expanduser() if args.out else Path.cwd()
    if out.exists() and not out.is_dir():
        _err(f"--out {out} is a file, not a folder")
        return 2
    toolbox = paths.default_toolbox(getattr(args, "toolbox", None))
    taken = g.taken_names([out, toolbox])

    progress = _Progress(sys.stderr, opts.model)
    try:
        result = asyncio.run(
            g.generate(
                args.prompt,
                model=opts.model,
                api_key=opts.api_key,
                base_url=opts.base_url,
                name_hint=args.name_hint,
                max_repairs=opts.max_repairs,
                existing_names=taken,
                on_event=progress,
            )
        )
    except g.GenerateError as exc:
        progress.line(str(exc))
        return 2

    if result.errors and not args.keep_invalid:
        _err(
            f"the tool still has {len(result.errors)} error(s) after "
            f"{result.rounds} answer(s): nothing was written (--keep-invalid writes it anyway)"
        )
        return 1
    try:
        path = g.save_new(result, out, keep_invalid=args.keep_invalid)
    except g.GenerateError as exc:
        _err(f"{exc}")
        return 2
    _err(f"wrote {result.name} {result.version} by {result.model}")
    print(path)
    return 1 if result.errors else 0
