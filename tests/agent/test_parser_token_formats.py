"""Call formats of newer open models, written with special tokens (issue 23 item 11).

Every positive case is the format as the model's own chat template or documentation writes it:
Kimi K2 (moonshotai's docs/tool_call_guidance.md), IBM Granite 3 (its chat template:
``<|tool_call|>`` + a JSON list), Phi-4-mini (its chat template: ``<|tool_call|>..<|/tool_call|>``),
gpt-oss (OpenAI's harmony format guide). Every negative case keeps the same tokens out of a
call: in prose, in a code block or inline code that explains them, cut short, or malformed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from clawseed_edge.agent import AgentBuilder, StaticApprover
from clawseed_edge.agent.parser import ParsedCall, parse_tool_calls
from clawseed_edge.agent.toolcalls.parser import scan_tool_calls
from clawseed_edge.agent.xml_dispatch import XmlToolDispatcher
from clawseed_edge.api import (
    ChatRequest,
    ChatResponse,
    ProviderCapabilities,
    StopReason,
    StreamDone,
    StreamEvent,
    TextDelta,
)
from clawseed_edge.testing import EchoTool


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
        '<tool_call>{"name": "echo", "arguments": {"text": "real"}, "x": "</tool_call>"}</tool_call>',
    ),
]


def test_many_hermes_calls_with_closing_tags_in_strings_are_all_read() -> None:
    block = '<tool_call>{"name": "a", "arguments": {"s": "</tool_call>"}}</tool_call>\n'
    remaining, calls = parse_tool_calls(block * 3000)
    assert len(calls) == 3000 and calls[0].arguments == {"s": "</tool_call>"}
    assert remaining == ""


# --- Kimi K2 ----------------------------------------------------------------------------------

K_SECTION = "<|tool_calls_section_begin|>"
K_SECTION_END = "<|tool_calls_section_end|>"
K_CALL = "<|tool_call_begin|>"
K_ARGS = "<|tool_call_argument_begin|>"
K_CALL_END = "<|tool_call_end|>"


def kimi(*calls: str) -> str:
    return K_SECTION + "".join(calls) + K_SECTION_END


def kimi_call(call_id: str, args: str) -> str:
    return f"{K_CALL}{call_id}{K_ARGS}{args}{K_CALL_END}"


def test_kimi_section_as_the_guide_writes_it() -> None:
    text = kimi(kimi_call("functions.get_weather:0", '{"city": "Beijing"}'))
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("get_weather", {"city": "Beijing"})]
    assert calls[0].shape == "kimi_k2" and calls[0].raw == text
    assert remaining == ""


def test_kimi_several_calls_with_text_and_whitespace_between_tokens() -> None:
    text = (
        "I'll check both.\n"
        + K_SECTION
        + "\n "
        + kimi_call("functions.get_weather:0", '{"city": "Beijing"}')
        + "\n"
        + f"{K_CALL} functions.get_time:1 {K_ARGS} {{}} {K_CALL_END}"
        + "\n"
        + K_SECTION_END
    )
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("get_weather", {"city": "Beijing"}), ("get_time", {})]
    assert remaining == "I'll check both."


def test_kimi_variants_id_without_namespace_singular_section_and_no_arguments() -> None:
    text = (
        "<|tool_call_section_begin|>"
        + kimi_call("get_weather:3", '{"city": "Rome"}')
        + f"{K_CALL}functions.status:4{K_ARGS}{K_CALL_END}"
        + "<|tool_call_section_end|>"
    )
    assert pairs(parse_tool_calls(text)[1]) == [("get_weather", {"city": "Rome"}), ("status", {})]


def test_kimi_section_cut_by_a_stop_sequence_after_its_last_call() -> None:
    text = K_SECTION + kimi_call("functions.get_weather:0", '{"city": "Oslo"}')
    assert pairs(parse_tool_calls(text)[1]) == [("get_weather", {"city": "Oslo"})]


def test_kimi_end_token_inside_a_json_string_does_not_end_the_call() -> None:
    args = '{"content": "close with <|tool_call_end|><|tool_calls_section_end|> then"}'
    text = kimi(kimi_call("functions.file_write:0", args), kimi_call("functions.b:1", "{}"))
    _, calls = parse_tool_calls(text)
    assert pairs(calls) == [
        ("file_write", {"content": "close with <|tool_call_end|><|tool_calls_section_end|> then"}),
        ("b", {}),
    ]


def test_kimi_invalid_name_drops_only_that_call() -> None:
    text = kimi(kimi_call("functions.sh;ell:0", "{}"), kimi_call("functions.ok:1", "{}"))
    assert pairs(parse_tool_calls(text)[1]) == [("ok", {})]


KIMI_NEGATIVES = [
    # prose that names the tokens
    f"Kimi K2 wraps its calls in {K_SECTION} and {K_SECTION_END}, one {K_CALL} each.",
    # a code block that explains the format
    "The format is:\n```\n" + kimi(kimi_call("functions.shell:0", '{"cmd": "id"}')) + "\n```",
    "```text\n" + kimi(kimi_call("functions.shell:0", "{}")) + "\n```\nThat is all.",
    # inline code that quotes it
    "Kimi writes `" + kimi(kimi_call("functions.shell:0", "{}")) + "` to call a tool.",
    # a call without its section
    kimi_call("functions.shell:0", '{"cmd": "id"}'),
    # prose inside the section
    K_SECTION + "let me think " + kimi_call("functions.shell:0", "{}") + K_SECTION_END,
    # cut off inside the arguments, or before them
    K_SECTION + K_CALL + "functions.shell:0" + K_ARGS + '{"cmd": "i',
    K_SECTION + K_CALL + "functions.shell:0",
    # an id that is not one
    kimi(f"{K_CALL}functions.sh ell:0{K_ARGS}{{}}{K_CALL_END}"),
    # an echoed tool result
    "<tool_result>" + kimi(kimi_call("functions.shell:0", "{}")) + "</tool_result>",
]


@pytest.mark.parametrize("text", KIMI_NEGATIVES)
def test_kimi_tokens_that_are_not_a_call(text: str) -> None:
    if text.startswith(K_SECTION) and K_SECTION_END not in text:
        no_call(text)  # cut off at the end: nothing may follow it
        assert scan_tool_calls(text).unreadable == []  # no end token: not reported either
        assert parse_tool_calls(kimi(kimi_call("functions.echo:0", "{}")))[1]
    else:
        only_the_real_call(text, kimi(kimi_call("functions.echo:0", '{"text": "real"}')))


def test_kimi_malformed_arguments_are_reported_not_run() -> None:
    good = kimi_call("functions.led_set:0", '{"on": true}')
    text = kimi(good, kimi_call("functions.get_weather:1", '{"city": "Ro'))
    no_call(text)  # one unreadable call spoils the section: the LED does not switch alone
    scan = scan_tool_calls(text)
    (bad,) = scan.unreadable
    assert (bad.name, bad.shape) == ("get_weather", "kimi_k2")
    assert "not valid JSON" in bad.error
    assert scan.remaining_reported == ""


def test_dispatcher_turns_an_unreadable_block_into_a_refused_call() -> None:
    text = "Let me see.\n" + kimi(kimi_call("functions.get_weather:0", '{"city": Rome}'))
    parsed = XmlToolDispatcher().read(ChatResponse(text))
    (call,) = parsed.calls
    assert call.name == "get_weather" and call.id == "unreadable_1"
    assert "not valid JSON" in call.arguments["_error"] and "kimi_k2" in call.arguments["_error"]
    assert call.arguments["_invalid_arguments"] == text.split("\n", 1)[1]
    assert parsed.text == "Let me see."
    assert K_SECTION in parsed.message.content  # history keeps what the model wrote


REAL_KIMI = kimi(kimi_call("functions.echo:0", '{"text": "real"}'))
STREAMED["kimi_k2"] = kimi(kimi_call("functions.echo:0", '{"text": "hi"}'))
PATHOLOGICAL += [
    (K_SECTION, REAL_KIMI),
    (K_SECTION + K_CALL + "functions.a:0" + K_ARGS + '{"x": "', REAL_KIMI),
    (K_CALL + "a:0" + K_ARGS, REAL_KIMI),
]


def test_many_kimi_sections_are_all_read() -> None:
    remaining, calls = parse_tool_calls(kimi(kimi_call("functions.a:0", '{"i": 1}')) * 3000)
    assert len(calls) == 3000 and remaining == ""


# --- IBM Granite 3 and Phi-4-mini ---------------------------------------------------------------


def test_granite_tool_call_token_and_json_list() -> None:
    text = (
        '<|tool_call|>[{"name": "get_current_weather", "arguments": {"location": "Boston"}},'
        ' {"name": "get_time", "arguments": {}}]<|end_of_text|>'
    )
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("get_current_weather", {"location": "Boston"}), ("get_time", {})]
    assert {c.shape for c in calls} == {"granite"}
    assert remaining == ""


def test_granite_without_end_token_and_with_text_after() -> None:
    text = 'Checking.\n<|tool_call|>[{"name": "a", "arguments": {"x": 1}}]\nOne moment.'
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("a", {"x": 1})]
    assert remaining == "Checking.\nOne moment."


def test_phi4_mini_as_its_template_writes_it() -> None:
    # The template's own example, then a list with "parameters" as some builds write it.
    one = '<|tool_call|>{"name": "foo", "arguments": {"a": 1}}<|/tool_call|>'
    many = '<|tool_call|>[{"name":"tv_get_account","parameters":{}}]<|/tool_call|>Observed facts'
    assert pairs(parse_tool_calls(one)[1]) == [("foo", {"a": 1})]
    remaining, calls = parse_tool_calls(many)
    assert pairs(calls) == [("tv_get_account", {})]
    assert calls[0].shape == "phi4_mini"
    assert remaining == "Observed facts"


def test_phi4_mini_closing_token_inside_a_json_string() -> None:
    text = (
        '<|tool_call|>[{"name": "note", "arguments": {"text": "a <|/tool_call|> b"}}]'
        '<|/tool_call|><|tool_call|>{"name": "c", "arguments": {}}<|/tool_call|>'
    )
    assert pairs(parse_tool_calls(text)[1]) == [
        ("note", {"text": "a <|/tool_call|> b"}),
        ("c", {}),
    ]


SPECIAL_NEGATIVES = [
    "Granite and Phi-4-mini start a call with <|tool_call|> and Phi ends it with <|/tool_call|>.",
    "<|tool_call|> is a special token.",
    '```\n<|tool_call|>[{"name": "shell", "arguments": {}}]\n```',
    'Phi writes `<|tool_call|>{"name": "shell", "arguments": {}}<|/tool_call|>`.',
    '<|tool_call|>[{"name": "sh ell", "arguments": {}}]<|/tool_call|>',
    "<|tool_call|>[1, 2]<|/tool_call|>",
    '<|tool_call|>{"name": "a", "arguments": [1]}<|/tool_call|>',
    '<tool_response><|tool_call|>[{"name": "shell", "arguments": {}}]</tool_response>',
]


@pytest.mark.parametrize("text", SPECIAL_NEGATIVES)
def test_special_tool_call_tokens_that_are_not_a_call(text: str) -> None:
    only_the_real_call(text, '<|tool_call|>[{"name": "echo", "arguments": {"text": "real"}}]')


@pytest.mark.parametrize(
    ("text", "name", "shape"),
    [
        ('<|tool_call|>[{"name": "a", "arguments": {broken}}]<|/tool_call|>', "a", "phi4_mini"),
        ('<|tool_call|>[{"name": "b", "arguments": {"x": ', "b", "granite"),
    ],
)
def test_special_tool_call_malformed_json_is_reported(text: str, name: str, shape: str) -> None:
    no_call(text)
    (bad,) = scan_tool_calls(text).unreadable
    assert (bad.name, bad.shape) == (name, shape)
    assert "not valid JSON" in bad.error


REAL_GRANITE = '<|tool_call|>[{"name": "echo", "arguments": {"text": "real"}}]'
STREAMED["granite"] = '<|tool_call|>[{"name": "echo", "arguments": {"text": "hi"}}]'
STREAMED["phi4_mini"] = '<|tool_call|>{"name": "echo", "arguments": {"text": "hi"}}<|/tool_call|>'
PATHOLOGICAL += [
    ("<|tool_call|>", REAL_GRANITE),
    ('<|tool_call|>[{"a": "', REAL_GRANITE),
    ("<|tool_call|>{", REAL_GRANITE),
    ("`<|tool_call|>` ", REAL_GRANITE),
]


def test_many_phi4_mini_blocks_are_all_read() -> None:
    block = '<|tool_call|>[{"name": "a", "arguments": {"i": 1}}]<|/tool_call|>'
    remaining, calls = parse_tool_calls(block * 3000)
    assert len(calls) == 3000 and remaining == ""


# --- gpt-oss harmony ----------------------------------------------------------------------------

H_COT = "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"


def test_harmony_call_as_the_guide_writes_it() -> None:
    text = (
        H_COT + "<|start|>assistant<|channel|>commentary to=functions.get_weather "
        '<|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
    )
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("get_weather", {"location": "San Francisco"})]
    assert calls[0].shape == "harmony"
    assert remaining == ""  # the chain of thought is not shown


def test_harmony_recipient_before_the_channel() -> None:
    text = (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary "
        '<|constrain|>json<|message|>{"location":"Tokyo"}<|call|>'
    )
    assert pairs(parse_tool_calls(text)[1]) == [("get_weather", {"location": "Tokyo"})]


def test_harmony_first_message_continues_the_prompts_start_token() -> None:
    # The prompt ends with "<|start|>assistant": the reply begins with the rest of the header.
    for text in (
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"location":"Rome"}<|call|>',
        'to=functions.get_weather <|channel|>commentary<|message|>{"location":"Rome"}<|call|>',
    ):
        assert pairs(parse_tool_calls(text)[1]) == [("get_weather", {"location": "Rome"})]


def test_harmony_header_with_line_breaks_and_no_call_token_at_the_end() -> None:
    text = '<|channel|>commentary to=functions.lookup\n<|constrain|>json\n<|message|>{"text": "hi"}'
    assert pairs(parse_tool_calls(text)[1]) == [("lookup", {"text": "hi"})]


def test_harmony_preamble_stays_visible_and_the_call_is_read() -> None:
    text = (
        "<|channel|>analysis<|message|>long thought<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>**Action plan**: make the file."
        "<|end|><|start|>assistant<|channel|>commentary to=functions.generate_file"
        '<|constrain|>json<|message|>{"template": "basic_html", "path": "index.html"}<|call|>'
    )
    remaining, calls = parse_tool_calls(text)
    assert pairs(calls) == [("generate_file", {"template": "basic_html", "path": "index.html"})]
    assert remaining == "**Action plan**: make the file."


def test_harmony_final_answer_is_shown_without_tokens_or_thoughts() -> None:
    text = (
        '<|channel|>analysis<|message|>User asks: "What is 2 + 2?" Simple.<|end|>'
        "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
    )
    assert parse_tool_calls(text) == ("2 + 2 = 4.", [])


def test_harmony_call_token_inside_a_json_string() -> None:
    text = (
        "<|channel|>commentary to=functions.note <|constrain|>json<|message|>"
        '{"text": "ends with <|call|> and <|end|>"}<|call|>'
    )
    assert pairs(parse_tool_calls(text)[1]) == [
        ("note", {"text": "ends with <|call|> and <|end|>"})
    ]


HARMONY_NEGATIVES = [
    "gpt-oss puts calls on the commentary channel with to=functions.NAME and ends with <|call|>.",
    "```\n<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json"
    '<|message|>{"cmd": "id"}<|call|>\n```',
    'Write `<|channel|>commentary to=functions.shell<|message|>{"cmd": "id"}<|call|>` to call.',
    # another namespace (a built-in tool), not one of ours
    '<|channel|>commentary to=browser.search<|message|>{"query": "x"}<|call|>',
    # the recipient is in prose before the token, not in a header
    'Sure. to=functions.shell<|channel|>commentary<|message|>{"cmd": "id"}<|call|>',
    "<|channel|>commentary to=functions.sh;ell<|message|>{}<|call|>",
    '<tool_result><|channel|>commentary to=functions.shell<|message|>{"c": 1}<|call|></tool_result>',
]


@pytest.mark.parametrize("text", HARMONY_NEGATIVES)
def test_harmony_tokens_that_are_not_a_call(text: str) -> None:
    real = '<|start|>assistant<|channel|>commentary to=functions.echo<|message|>{"text": "real"}<|call|>'
    assert pairs(parse_tool_calls(text + "\n" + real)[1]) == [("echo", {"text": "real"})]


def test_harmony_call_in_the_analysis_channel_never_runs() -> None:
    text = (
        '<|channel|>analysis to=functions.shell<|message|>{"cmd": "reboot"}<|end|>'
        "<|start|>assistant<|channel|>final<|message|>Nothing to do.<|return|>"
    )
    assert parse_tool_calls(text) == ("Nothing to do.", [])


def test_harmony_malformed_arguments_are_reported() -> None:
    text = "<|channel|>commentary to=functions.led_set <|constrain|>json<|message|>{on: 1}<|call|>"
    no_call(text)
    (bad,) = scan_tool_calls(text).unreadable
    assert (bad.name, bad.shape) == ("led_set", "harmony")


REAL_HARMONY = (
    '<|start|>assistant<|channel|>commentary to=functions.echo<|message|>{"text": "real"}<|call|>'
)
STREAMED["harmony"] = (
    H_COT + "<|start|>assistant<|channel|>commentary to=functions.echo <|constrain|>json"
    '<|message|>{"text": "hi"}<|call|>'
)
PATHOLOGICAL += [
    ("<|channel|>", REAL_HARMONY),
    ("<|start|>assistant<|channel|>commentary to=functions.a<|message|>{", REAL_HARMONY),
    (" to=functions.a<|channel|>final<|message|>x<|end|>", REAL_HARMONY),
    ("<|channel|>analysis<|message|>", None),
]


def test_many_harmony_calls_are_all_read() -> None:
    block = '<|channel|>commentary to=functions.a<|message|>{"i": 1}<|call|>\n'
    remaining, calls = parse_tool_calls(block * 3000)
    assert len(calls) == 3000 and remaining == ""


# --- through the prompt-guided dispatcher and the engine ---------------------------------------


class ChunkedProvider:
    """A prompt-guided model that streams each reply in ``size``-character pieces."""

    name = "chunked"
    model = "chunked-model"

    def __init__(self, replies: list[str], size: int) -> None:
        self.replies = replies
        self.size = size
        self.requests: list[ChatRequest] = []

    @property
    def capabilities(self) -> ProviderCapabilities:
        return ProviderCapabilities(native_tools=False, vision=False, streaming=True)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(self.replies.pop(0), stop_reason=StopReason.END_TURN)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        response = await self.chat(request)
        text = response.text
        for i in range(0, len(text), self.size):
            yield TextDelta(text[i : i + self.size])
        yield StreamDone(response)

    async def aclose(self) -> None:
        """Nothing to release."""


@pytest.mark.parametrize("size", [1, 2, 3, 7])
@pytest.mark.parametrize("shape", sorted(STREAMED))
async def test_markers_split_across_stream_chunks_still_call(shape: str, size: int) -> None:
    # The prompt-guided text is parsed once the stream has ended, never piece by piece, so a
    # marker cut across chunk boundaries is read whole (and none of it is shown live).
    echo = EchoTool()
    provider = ChunkedProvider([STREAMED[shape], "Echoed."], size)
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([echo])
        .autonomy("full")
        .approver(StaticApprover(True))
        .platform("test")
        .build()
    )
    async with agent:
        events = [e async for e in agent.turn("go")]
    assert echo.calls == [{"text": "hi"}]
    chunks = "".join(getattr(e, "text", "") for e in events if e.type == "chunk")
    assert "<|" not in chunks
    assert events[-1].type == "done"


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


async def test_an_unreadable_block_stops_the_whole_response_and_the_model_is_told() -> None:
    # A good call beside a broken one: neither runs (one relay of a pair never switches alone),
    # and the next request tells the model which JSON was broken and why.
    echo = EchoTool()
    first = (
        '<tool_call>{"name": "echo", "arguments": {"text": "one"}}</tool_call>\n'
        + '<|tool_call|>[{"name": "echo", "arguments": {"text": \'two\'}}]<|/tool_call|>'
    )
    provider = ChunkedProvider([first, "Sorry, resending."], 5)
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([echo])
        .autonomy("full")
        .approver(StaticApprover(True))
        .platform("test")
        .build()
    )
    async with agent:
        assert await agent.run("go") == "Sorry, resending."
    assert echo.calls == []
    results = provider.requests[1].messages[-1].content
    assert "phi4_mini call: the arguments are not valid JSON" in results
    assert "not run" in results
