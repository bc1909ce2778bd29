"""Call formats of newer open models, written with special tokens (issue 23 item 11).

Every positive case is the format as the model's own chat template or documentation writes it:
Kimi K2 (moonshotai's docs/tool_call_guidance.md), IBM Granite 3 (its chat template:
``<|tool_call|>`` + a JSON list), Phi-4-mini (its chat template: ``<|tool_call|>..<|/tool_call|>``),
gpt-oss (OpenAI's harmony format guide). Every negative case keeps the same tokens out of a
call: in prose, in a code block or inline code that explains them, cut short, or malformed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from clawseed_edge.agent.parser import ParsedCall, parse_tool_calls


def pairs(calls: Sequence[ParsedCall]) -> list[tuple[str, dict[str, object]]]:
    return [(c.name, c.arguments) for c in calls]


def no_call(text: str) -> None:
    """``text`` yields no call and comes back whole."""
    remaining, calls = parse_tool_calls(text)
    assert calls == []
    assert remaining == text.strip()


def only_the_real_call(text: str, real: str) -> None:
    """In ``text`` + ``real``, only ``real`` (a call of the same format) is read; ``text`` stays.

    The real call after the negative proves the format is read at all (so each negative fails
    where the format is unknown) and that the negative does not swallow what follows it.
    """
    remaining, calls = parse_tool_calls(text + "\n" + real)
    assert pairs(calls) == [("echo", {"text": "real"})]
    assert remaining == text.strip()


#: Per format: a reply that calls ``echo(text="hi")``, streamed in small pieces below.
STREAMED: dict[str, str] = {}
#: Per format: (a unit repeated to a megabyte, a real call of the format to put after it;
#: None when the unit is an unclosed block that rightly runs to the end of the text).
PATHOLOGICAL: list[tuple[str, str | None]] = []


# --- a closing tag inside a JSON string (Hermes / Qwen and the other tag formats) ------------


def test_hermes_closing_tag_inside_a_string_argument() -> None:
    text = (
        '<tool_call>\n{"name": "file_write", "arguments": {"path": "a.md", '
        '"content": "Calls look like <tool_call>{...}</tool_call> in text."}}\n</tool_call>\n'
        '<tool_call>{"name": "file_read", "arguments": {"path": "a.md"}}</tool_call>'
    )
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [
        (
            "file_write",
            {"path": "a.md", "content": "Calls look like <tool_call>{...}</tool_call> in text."},
        ),
        ("file_read", {"path": "a.md"}),
    ]
    assert remaining == ""


def test_llama_function_and_minimax_closing_tags_inside_strings() -> None:
    text = (
        '<function=note>{"text": "see </function> here"}</function>\n'
        '<minimax:tool_call>{"name": "b", "arguments": {"s": "</minimax:tool_call>"}}'
        "</minimax:tool_call>"
    )
    assert pairs(parse_tool_calls(text)[1]) == [
        ("note", {"text": "see </function> here"}),
        ("b", {"s": "</minimax:tool_call>"}),
    ]


def test_hermes_call_quoted_in_inline_code_is_not_a_call() -> None:
    only_the_real_call(
        'To call a tool write `<tool_call>{"name": "shell", "arguments": {}}</tool_call>`.',
        '<tool_call>{"name": "echo", "arguments": {"text": "real"}}</tool_call>',
    )


QUOTED = '`<tool_call>{"name": "shell", "arguments": {}}</tool_call>` '
PATHOLOGICAL += [
    (QUOTED, '<tool_call>{"name": "echo", "arguments": {"text": "real"}}</tool_call>'),
    (
        '<tool_call>{"a": "',
        '<tool_call>{"name": "echo", "arguments": {"text": "real"}}</tool_call>',
    ),
]


def test_many_hermes_calls_with_closing_tags_in_strings_are_all_read() -> None:
    block = '<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call>\n'
    remaining, calls = parse_tool_calls(block * 3000)
    assert len(calls) == 3000 and calls[0].arguments == {"s": "</tool_call>"}
    assert remaining == ""


# --- bounds ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("unit", "real"), PATHOLOGICAL, ids=lambda v: repr(v)[:40])
def test_one_megabyte_of_repeated_tokens_returns(unit: str, real: str | None) -> None:
    text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    remaining, calls = parse_tool_calls(text)
    assert calls == []
    assert isinstance(remaining, str)
    if real is None:
        assert remaining == ""  # an unclosed thought runs to the end of the text, as <think> does
        return
    # A real call after the megabyte is still read: the work stayed within its budget.
    assert pairs(parse_tool_calls(text + "\n\n" + real)[1]) == [("echo", {"text": "real"})]
