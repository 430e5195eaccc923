"""Type-checked reads of untrusted fields, shared by the decoders.

A session file is hostile input: any field may be missing, retyped (a number where a list
was, a list where a string was), huge or deeply nested. Decoders check a value's type before
iterating, indexing, hashing or calling string methods on it, and a retyped field reads as
absent. These helpers are the checks that recur; each is a type test or two, no extra pass.
"""

from __future__ import annotations

from typing import Any

from .jsonl import loads

# Longer digit strings are damage, not exit codes (and past 4,300 digits int() refuses them).
_EXIT_DIGITS = 19


def items(value: Any) -> list:
    """`value` when it is a list, else an empty list (a retyped or missing field)."""
    return value if isinstance(value, list) else []


def text_or_none(value: Any) -> str | None:
    """`value` when it is a string, else None (ids and names must hash and compare as text)."""
    return value if isinstance(value, str) else None


def exit_code(digits: str) -> int | None:
    """The exit code a regex captured as text, or None when it is too long to be one."""
    if len(digits.lstrip("-")) > _EXIT_DIGITS:
        return None
    return int(digits)


def json_text(text: str) -> Any:
    """The value of JSON written as text inside a field (tool arguments, saved state).

    Raises ValueError when it is not JSON or nests too deeply; the nesting guard of the
    record reader applies, so a string holding thousands of brackets cannot exhaust the stack.
    """
    try:
        return loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def tool_arguments(raw: Any) -> dict:
    """A tool call's arguments: a dict as given, JSON text parsed, anything else kept under
    `input` (so the call still shows what it was given)."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json_text(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {}
