"""History: truncation markers, token estimate, time prefix, group-preserving trims."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from clawseed_edge.agent.history import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    History,
    estimate_tokens,
    time_prefix,
    truncate_tool_output,
)
from clawseed_edge.api import ChatMessage, ToolCall

# --- truncate_tool_output -----------------------------------------------------------------------


def test_short_output_is_unchanged() -> None:
    text = "x" * 8000
    assert truncate_tool_output(text) is text
    assert truncate_tool_output("", 5) == ""


def test_long_output_keeps_head_two_thirds_and_tail_one_third() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    out = truncate_tool_output(text, max_chars=30)
    # head 20, tail 10, 70 dropped
    assert out == text[:20] + "\n[... 70 characters truncated ...]\n" + text[-10:]


def test_truncation_marker_counts_exactly_with_default_budget() -> None:
    text = "H" * 6000 + "M" * 10_000 + "T" * 4000
    out = truncate_tool_output(text)
    head, marker, tail = out.split("\n")
    assert head == "H" * 5333
    assert tail == "T" * 2667
    assert marker == f"[... {len(text) - 8000} characters truncated ...]"


def test_truncation_by_one_character() -> None:
    out = truncate_tool_output("abcd", max_chars=3)
    assert out == "ab\n[... 1 characters truncated ...]\nd"


def test_truncation_budget_of_one_keeps_the_tail() -> None:
    assert truncate_tool_output("abc", max_chars=1) == "\n[... 2 characters truncated ...]\nc"


@pytest.mark.parametrize("bad", [0, -5])
def test_truncation_rejects_empty_budget(bad: int) -> None:
    with pytest.raises(ValueError, match="max_chars"):
        truncate_tool_output("abc", bad)


# --- estimate_tokens ----------------------------------------------------------------------------


def test_estimate_counts_chars_over_four_plus_overhead() -> None:
    msgs = [ChatMessage.user("a" * 40), ChatMessage.assistant("b" * 2)]
    assert estimate_tokens(msgs) == 11 + 2 * MESSAGE_OVERHEAD_TOKENS
    assert estimate_tokens([]) == 0


def test_estimate_counts_tool_call_arguments_and_images() -> None:
    plain = ChatMessage.assistant("")
    call = ChatMessage.assistant("", (ToolCall("gpio_write", {"pin": "led", "value": 1}, id="c1"),))
    assert estimate_tokens([call]) > estimate_tokens([plain]) + 5
    with_image = ChatMessage.user("hi", images=("AAAA",))
    assert estimate_tokens([with_image]) == estimate_tokens([ChatMessage.user("hi")]) + IMAGE_TOKENS


def test_estimate_survives_non_json_arguments() -> None:
    msg = ChatMessage.assistant("", (ToolCall("t", {"when": datetime(2020, 1, 1)}, id="x"),))
    assert estimate_tokens([msg]) > MESSAGE_OVERHEAD_TOKENS


# --- time_prefix --------------------------------------------------------------------------------


def test_time_prefix_honours_aware_datetime() -> None:
    assert time_prefix(datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)) == "[2026-03-04 05:06:07 UTC] "


def test_time_prefix_fixed_offset_zone() -> None:
    tz = timezone(timedelta(hours=5, minutes=30), "IST")
    assert time_prefix(datetime(2026, 12, 31, 23, 59, 59, tzinfo=tz)) == (
        "[2026-12-31 23:59:59 IST] "
    )


def test_time_prefix_default_is_local_now_with_a_zone() -> None:
    prefix = time_prefix()
    assert prefix.startswith("[") and prefix.endswith("] ")
    stamp = prefix[1:-2]
    date, clock, zone = stamp.split(" ")
    datetime.strptime(f"{date} {clock}", "%Y-%m-%d %H:%M:%S")
    assert zone


def test_time_prefix_naive_is_local() -> None:
    naive = datetime(2026, 6, 1, 12, 0, 0)
    expected_zone = naive.astimezone().tzname()
    assert time_prefix(naive) == f"[2026-06-01 12:00:00 {expected_zone}] "


# --- History ------------------------------------------------------------------------------------


def _u(i: int) -> ChatMessage:
    return ChatMessage.user(f"u{i}")


def _a(i: int) -> ChatMessage:
    return ChatMessage.assistant(f"a{i}")


def _call(cid: str, *more: str) -> ChatMessage:
    calls = tuple(ToolCall("t", {}, id=c) for c in (cid, *more))
    return ChatMessage.assistant("", calls)


def _res(cid: str) -> ChatMessage:
    return ChatMessage.tool(cid, f"result {cid}", name="t")


def _contents(h: History) -> list[str]:
    return [m.content or f"<call {m.tool_calls[0].id}>" for m in h.messages]


def test_history_rejects_system_messages() -> None:
    h = History()
    with pytest.raises(ValueError, match="for_request"):
        h.append(ChatMessage.system("you are"))
    with pytest.raises(ValueError, match="system"):
        h.extend([_u(1), ChatMessage.system("x")])
    assert len(h) == 0  # the batch was not half-applied
    with pytest.raises(ValueError):
        History(messages=[ChatMessage.system("x")])


def test_history_rejects_nonpositive_bound() -> None:
    with pytest.raises(ValueError, match="max_messages"):
        History(max_messages=0)


def test_for_request_puts_system_prompt_first() -> None:
    h = History(messages=[_u(1), _a(1)])
    req = h.for_request("SYSTEM")
    assert req[0] == ChatMessage.system("SYSTEM")
    assert req[1:] == h.messages
    assert isinstance(h.messages, tuple)


def test_trim_under_bound_drops_nothing() -> None:
    h = History(max_messages=4, messages=[_u(1), _a(1), _u(2)])
    assert h.trim() == 0
    assert len(h) == 3


def test_trim_drops_oldest_first_to_bound() -> None:
    h = History(max_messages=3)
    h.extend([_u(1), _a(1), _u(2), _a(2), _u(3)])
    assert h.trim() == 2
    assert _contents(h) == ["u2", "a2", "u3"]


def test_trim_drops_a_call_together_with_its_results() -> None:
    msgs = [_u(1), _call("c1", "c2"), _res("c1"), _res("c2"), _a(1), _u(2)]
    h = History(max_messages=4, messages=msgs)
    # dropping u1 alone leaves 5 > 4; the next group is the call with both results
    assert h.trim() == 4
    assert _contents(h) == ["a1", "u2"]
    assert all(m.role != "tool" for m in h.messages)


def test_trim_never_keeps_results_without_their_call() -> None:
    msgs = [_u(1), _call("c1"), _res("c1"), _u(2), _call("c2"), _res("c2"), _a(2)]
    for bound in range(1, len(msgs) + 1):
        h = History(max_messages=bound, messages=msgs)
        h.trim()
        kept = h.messages
        assert kept[0].role != "tool", bound
        calls = {c.id for m in kept for c in m.tool_calls}
        results = {m.tool_call_id for m in kept if m.role == "tool"}
        assert results == calls, bound


def test_trim_keeps_newest_group_even_if_larger_than_bound() -> None:
    msgs = [_u(1), _call("c1", "c2", "c3"), _res("c1"), _res("c2"), _res("c3")]
    h = History(max_messages=2, messages=msgs)
    assert h.trim() == 1
    assert len(h) == 4
    assert h.messages[0].tool_calls


def test_trim_drops_leading_orphan_tool_messages_even_under_bound() -> None:
    h = History(max_messages=10, messages=[_res("old"), _res("old2"), _u(1), _a(1)])
    assert h.trim() == 2
    assert _contents(h) == ["u1", "a1"]


def test_trim_of_only_an_orphan_tool_message_empties_history() -> None:
    h = History(messages=[_res("x")])
    assert h.trim() == 1
    assert len(h) == 0


def test_trim_of_empty_history() -> None:
    assert History().trim() == 0


def test_trim_is_idempotent_and_bounded_over_a_long_conversation() -> None:
    h = History(max_messages=50)
    for i in range(200):
        h.append(_u(i))
        h.append(_call(f"c{i}"))
        h.append(_res(f"c{i}"))
        h.append(_a(i))
        h.trim()
        assert len(h) <= 50
    assert h.trim() == 0
    assert h.messages[-1].content == "a199"
    assert h.messages[0].role != "tool"
