"""Talking to Claude's Messages API: one streamed round, and SDK or transport failures turned into
one clear sentence (GenerateError).

`anthropic` (and its HTTP stack) is imported inside these functions, so importing the generator,
or starting the app, never loads it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from patch_tui.generate.prompt import system_prompt
from patch_tui.generate.results import Event, EventHandler, GenerateError, TextDelta, Usage
from patch_tui.settings import paths


async def _emit(on_event: EventHandler | None, event: Event) -> None:
    if on_event is None:
        return
    result = on_event(event)
    if inspect.isawaitable(result):
        await result


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _retry_after(headers: Any) -> float | None:
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(key) if headers is not None else None
        if value is None:
            continue
        try:
            return float(value) * scale
        except ValueError:
            continue
    return None


def _translate(exc: BaseException, model: str, base_url: str | None) -> GenerateError | None:
    """An SDK or transport exception as one clear sentence; None when it is not one of them."""
    import anthropic
    import httpx2

    where = base_url or "https://api.anthropic.com"
    if isinstance(exc, anthropic.AuthenticationError):
        return GenerateError(
            "auth",
            "Claude refused the API key (401): check ANTHROPIC_API_KEY or anthropic_api_key in "
            f"{paths.config_file()}.",
        )
    if isinstance(exc, anthropic.RateLimitError):
        seconds = _retry_after(exc.response.headers)
        when = (
            f"try again in {seconds:g} seconds" if seconds is not None else "try again in a minute"
        )
        return GenerateError(
            "rate_limit", f"Claude's rate limit was reached (429): {when}.", retry_after=seconds
        )
    if isinstance(exc, anthropic.APIStatusError) and (
        isinstance(exc, anthropic.OverloadedError) or exc.type == "overloaded_error"
    ):
        return GenerateError(
            "overloaded", "Claude is overloaded right now (529): try again in a minute."
        )
    if isinstance(exc, anthropic.NotFoundError) or (
        isinstance(exc, anthropic.APIStatusError) and exc.type == "not_found_error"
    ):
        return GenerateError(
            "model",
            f"Claude's API does not know the model {model!r} (404): choose another with --model "
            "or PATCH_TUI_MODEL.",
        )
    if isinstance(exc, anthropic.APIStatusError):
        detail = exc.api_message or exc.message
        return GenerateError(
            "api", f"Claude's API answered {exc.status_code}: {_one_line(detail)}."
        )
    if isinstance(exc, anthropic.APITimeoutError):
        return GenerateError(
            "connection", f"Claude's API at {where} did not answer in time: try again."
        )
    if isinstance(exc, anthropic.APIConnectionError):
        cause = _one_line(str(exc.__cause__ or exc)).rstrip(".")
        return GenerateError(
            "connection",
            f"Cannot reach Claude's API at {where} ({cause}): check your network or ANTHROPIC_BASE_URL.",
        )
    if isinstance(exc, httpx2.TransportError):
        return GenerateError(
            "dropped",
            "The connection to Claude's API dropped in the middle of the answer: nothing was saved, try again.",
        )
    return None


class _UnreadableAnswer(Exception):
    """The stream arrived but could not be read as a Messages API answer."""


@dataclass
class _Answer:
    text: str
    model: str
    usage: Usage
    stop_reason: str | None


async def _stream_round(
    client: Any,
    *,
    model: str,
    messages: list[dict[str, Any]],
    max_tokens: int,
    round_no: int,
    on_event: EventHandler | None,
) -> _Answer:
    system = [{"type": "text", "text": system_prompt(), "cache_control": {"type": "ephemeral"}}]
    chunks: list[str] = []
    async with client.messages.stream(
        model=model, max_tokens=max_tokens, system=system, messages=messages
    ) as stream:
        async for event in stream:
            if event.type == "text":
                chunks.append(event.text)
                await _emit(on_event, TextDelta(round_no, event.text))
        final = await stream.get_final_message()
    u = final.usage
    usage = Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=u.output_tokens or 0,
        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
        cache_read_input_tokens=u.cache_read_input_tokens or 0,
    )
    text = "".join(b.text for b in final.content if getattr(b, "type", None) == "text") or "".join(
        chunks
    )
    return _Answer(
        text=text, model=final.model or model, usage=usage, stop_reason=final.stop_reason
    )
