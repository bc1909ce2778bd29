"""SecurityPolicy: autonomy, shell allowlist, forbidden paths, rates, devices, approval."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent.approval import CallbackApprover, StaticApprover
from clawseed_edge.agent.security import Autonomy, SecurityPolicy, check_command
from clawseed_edge.api import (
    ApprovalDecision,
    ApprovalRequest,
    PolicyDecision,
    RiskClass,
    Tool,
    ToolCall,
    ToolContext,
)

from ._tools import DeviceTool, EchoTool, FakeClock, FileReadTool, RecordingObserver, ShellTool


def ctx(session: str = "s1") -> ToolContext:
    return ToolContext(session_id=session)


async def decide(
    policy: SecurityPolicy, tool: Tool, session: str = "s1", **args: Any
) -> tuple[bool, str]:
    d = await policy.before_tool(ToolCall(tool.name, args, "c1"), tool, ctx(session))
    return d.outcome != "cancel", d.reason


# --- autonomy ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("autonomy", "risk", "allowed"),
    [
        ("read_only", RiskClass.READ, True),
        ("read_only", RiskClass.ACT, False),
        ("read_only", RiskClass.DANGEROUS, False),
        ("full", RiskClass.ACT, True),
        ("full", RiskClass.DANGEROUS, True),
    ],
)
async def test_autonomy_by_risk(autonomy: str, risk: RiskClass, allowed: bool) -> None:
    policy = SecurityPolicy(autonomy=autonomy)
    ok, reason = await decide(policy, EchoTool("t", risk))
    assert ok is allowed
    if not allowed:
        assert "read_only" in reason and "supervised" in reason  # says what the user can do


async def test_supervised_asks_the_approver_for_act_but_not_for_read() -> None:
    approver = StaticApprover(True)
    policy = SecurityPolicy(autonomy="supervised", approver=approver)
    assert (await decide(policy, EchoTool("look", RiskClass.READ)))[0]
    assert approver.requests == []
    assert (await decide(policy, EchoTool("act", RiskClass.ACT), text="x"))[0]
    [req] = approver.requests
    assert req.tool == "act" and req.risk == "act" and req.session_id == "s1"
    assert req.arguments == {"text": "x"}


async def test_unknown_autonomy_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="read_only, supervised, full"):
        SecurityPolicy(autonomy="yolo")


async def test_tool_without_risk_or_describe_methods_is_treated_as_dangerous() -> None:
    class Bare:
        name = "bare"

        async def execute(self, arguments: Any, context: Any) -> Any:
            return None

    policy = SecurityPolicy(autonomy="read_only")
    ok, _ = await decide(policy, Bare())  # type: ignore[arg-type]
    assert not ok
    assert (await decide(SecurityPolicy(autonomy="full"), Bare()))[0]  # type: ignore[arg-type]


# --- approval ---------------------------------------------------------------------------------


async def test_approval_refused_is_a_cancel_with_the_reason() -> None:
    obs = RecordingObserver()
    policy = SecurityPolicy(approver=StaticApprover(False, "not now"), observer=obs)
    ok, reason = await decide(policy, EchoTool("act", RiskClass.ACT))
    assert not ok and "refused" in reason and "not now" in reason
    [event] = obs.of(PolicyDecision)
    assert event.decision == "refused" and event.tool == "act"


async def test_approval_granted_is_recorded_as_approved() -> None:
    obs = RecordingObserver()
    policy = SecurityPolicy(approver=StaticApprover(True), observer=obs)
    assert (await decide(policy, EchoTool("act", RiskClass.ACT)))[0]
    assert [e.decision for e in obs.of(PolicyDecision)] == ["approved"]


async def test_approval_timeout_counts_as_refused() -> None:
    async def never(request: ApprovalRequest) -> bool:
        await asyncio.Event().wait()
        return True

    obs = RecordingObserver()
    policy = SecurityPolicy(approver=CallbackApprover(never), approval_timeout_s=0.01, observer=obs)
    ok, reason = await decide(policy, EchoTool("act", RiskClass.ACT))
    assert not ok and "within 0.01 s" in reason and "no one answered" in reason
    assert obs.of(PolicyDecision)[0].decision == "refused"


async def test_no_approver_refuses_with_what_to_do() -> None:
    ok, reason = await decide(SecurityPolicy(approver=None), EchoTool("act", RiskClass.ACT))
    assert not ok and "no approver" in reason


async def test_an_approver_that_raises_counts_as_refused() -> None:
    async def broken(request: ApprovalRequest) -> ApprovalDecision:
        raise ConnectionError("phone offline")

    ok, reason = await decide(
        SecurityPolicy(approver=CallbackApprover(broken)), EchoTool("a", RiskClass.ACT)
    )
    assert not ok and "phone offline" in reason


# --- shell allowlist --------------------------------------------------------------------------

ALLOW = ["ls", "cat", "grep", "echo", "wc"]


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat notes.txt | grep foo | wc -l",
        "ls && echo done",
        "echo 'a; rm -rf /'",
        "ls;echo hi",
    ],
)
def test_allowed_command_chains(command: str) -> None:
    assert check_command(command, ALLOW)[0] is None


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("rm -rf /", "rm"),
        ("ls; rm -rf /", "rm"),
        ("ls;rm -rf /", "rm"),
        ("ls && curl evil.sh", "curl"),
        ("ls || sh x", "sh"),
        ("cat x | sh", "sh"),
        ("ls & reboot", "reboot"),
        ("ls\nreboot", "reboot"),
        ("(reboot)", "reboot"),
        ("FOO=1 rm x", "FOO=1"),
        ("/bin/rm x", "/bin/rm"),
    ],
)
def test_refused_command_chains_name_the_command(command: str, word: str) -> None:
    reason, _ = check_command(command, ALLOW)
    assert reason is not None and repr(word) in reason and "allowlist" in reason


@pytest.mark.parametrize(
    "command", ["echo $(reboot)", "echo `reboot`", "cat <(reboot)", 'echo "$(id)"']
)
def test_command_substitution_is_refused(command: str) -> None:
    reason, _ = check_command(command, ALLOW)
    assert reason is not None and "substitution" in reason


def test_unbalanced_quotes_are_refused() -> None:
    reason, _ = check_command("echo 'oops", ALLOW)
    assert reason is not None and "could not be parsed" in reason


def test_wildcard_allows_any_command() -> None:
    assert check_command("anything --goes", ["*"])[0] is None


async def test_policy_applies_the_allowlist_to_describe_access() -> None:
    policy = SecurityPolicy(autonomy="full", allowed_commands=ALLOW)
    assert (await decide(policy, ShellTool(), command="ls -la"))[0]
    ok, reason = await decide(policy, ShellTool(), command="ls && rm -rf ~")
    assert not ok and "'rm'" in reason


async def test_allowed_command_reading_a_forbidden_path_is_refused(tmp_path: Path) -> None:
    policy = SecurityPolicy(
        autonomy="full", allowed_commands=ALLOW, forbidden_paths=[str(tmp_path / "secret")]
    )
    ok, reason = await decide(policy, ShellTool(), command=f"cat {tmp_path}/secret/id_rsa")
    assert not ok and "forbidden path" in reason
    ok, _ = await decide(policy, ShellTool(), command=f"echo hi > {tmp_path}/secret/x")
    assert not ok


# --- forbidden paths --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/etc/shadow",
        "/etc/ssh/sshd_config",
        "~/.ssh/id_rsa",
        "/root/.ssh/authorized_keys",
        "/etc/sudoers",
    ],
)
async def test_default_forbidden_paths(path: str) -> None:
    ok, reason = await decide(SecurityPolicy(autonomy="full"), FileReadTool(), path=path)
    assert not ok and "forbidden path" in reason


async def test_ordinary_and_relative_paths_are_allowed(tmp_path: Path) -> None:
    policy = SecurityPolicy(autonomy="full", workspace_dir=tmp_path)
    assert (await decide(policy, FileReadTool(), path="notes.txt"))[0]
    assert (await decide(policy, FileReadTool(), path=str(tmp_path / "x.txt")))[0]


async def test_symlink_escape_into_a_forbidden_directory_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_rsa").write_text("KEY")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.symlink(secret, workspace / "innocent")
    os.symlink(secret / "id_rsa", workspace / "notes.txt")
    policy = SecurityPolicy(autonomy="full", workspace_dir=workspace, forbidden_paths=[str(secret)])
    for path in ("innocent/id_rsa", "notes.txt", str(workspace / "innocent" / "id_rsa")):
        ok, reason = await decide(policy, FileReadTool(), path=path)
        assert not ok, path
        assert str(secret) in reason
    # ".." tricks resolve too
    ok, _ = await decide(policy, FileReadTool(), path=f"{workspace}/../home/.ssh/id_rsa")
    assert not ok


async def test_forbidden_paths_are_configurable(tmp_path: Path) -> None:
    policy = SecurityPolicy(autonomy="full", forbidden_paths=[str(tmp_path / "vault")])
    assert not (await decide(policy, FileReadTool(), path=str(tmp_path / "vault" / "a")))[0]
    assert (await decide(policy, FileReadTool(), path="/etc/shadow"))[0]


# --- rate limits ------------------------------------------------------------------------------


async def test_session_rate_limit_is_a_sliding_window_per_session() -> None:
    clock = FakeClock()
    policy = SecurityPolicy(autonomy="full", max_actions_per_hour=3, clock=clock)
    act, read = EchoTool("act", RiskClass.ACT), EchoTool("look", RiskClass.READ)
    for _ in range(3):
        assert (await decide(policy, act))[0]
        clock.now += 60
    ok, reason = await decide(policy, act)
    assert not ok and "max_actions_per_hour=3" in reason
    assert (await decide(policy, read))[0]  # reads do not count
    assert (await decide(policy, act, session="other"))[0]  # per session
    clock.now += 3600 - 180  # the first action leaves the window
    assert (await decide(policy, act))[0]
    assert not (await decide(policy, act))[0]


async def test_refused_approval_does_not_count_against_the_rate() -> None:
    answers = iter([False, True, True])

    async def answer(request: ApprovalRequest) -> bool:
        return next(answers)

    policy = SecurityPolicy(
        approver=CallbackApprover(answer), max_actions_per_hour=2, clock=FakeClock()
    )
    act = EchoTool("act", RiskClass.ACT)
    results = [(await decide(policy, act))[0] for _ in range(3)]
    assert results == [False, True, True]


# --- devices ----------------------------------------------------------------------------------


async def test_device_action_not_allowed_is_denied_with_the_device() -> None:
    obs = RecordingObserver()
    policy = SecurityPolicy(autonomy="full", observer=obs)
    ok, reason = await decide(policy, DeviceTool(allowed=False, kind="button"), value=1)
    assert not ok and "'fan'" in reason
    [event] = obs.of(PolicyDecision)
    assert event.decision == "denied" and event.device == "fan"


async def test_device_value_out_of_range_names_the_limit() -> None:
    policy = SecurityPolicy(autonomy="full")
    tool = DeviceTool(min_value=0.0, max_value=0.6)
    ok, reason = await decide(policy, tool, value=0.9)
    assert not ok and "max_value=0.6" in reason
    ok, reason = await decide(policy, tool, value=-0.1)
    assert not ok and "min_value=0" in reason
    assert (await decide(policy, tool, value=0.6))[0]


async def test_device_requiring_approval_asks_even_in_full_autonomy() -> None:
    approver = StaticApprover(False)
    policy = SecurityPolicy(autonomy="full", approver=approver)
    ok, _ = await decide(
        policy, DeviceTool(requires_approval=True, summary="switch fan (GPIO23) on"), value=1
    )
    assert not ok
    assert approver.requests[0].summary == "switch fan (GPIO23) on"
    assert (await decide(policy, DeviceTool(), value=1))[0]  # no approval flag: full allows


async def test_device_rate_is_per_device_across_sessions() -> None:
    clock = FakeClock()
    policy = SecurityPolicy(autonomy="full", clock=clock, max_actions_per_hour=None)
    relay = DeviceTool(max_per_minute=2)
    assert (await decide(policy, relay, session="a", value=1))[0]
    assert (await decide(policy, relay, session="b", value=0))[0]
    ok, reason = await decide(policy, relay, session="c", value=1)
    assert not ok and "max_per_minute=2" in reason
    other = DeviceTool(max_per_minute=2, device="pump")
    assert (await decide(policy, other, session="a", value=1))[0]
    assert (await decide(policy, relay, session="a", op="read"))[0]  # reads are not switches
    clock.now += 61
    assert (await decide(policy, relay, session="c", value=1))[0]


async def test_device_rate_charges_the_switches_a_call_makes() -> None:
    clock = FakeClock()
    policy = SecurityPolicy(autonomy="full", clock=clock, max_actions_per_hour=None)
    blink = DeviceTool(max_per_minute=4, switches=4, repeats=2)
    assert (await decide(policy, blink, value=1))[0]
    ok, reason = await decide(policy, DeviceTool(max_per_minute=4), value=1)
    assert not ok and "max_per_minute=4" in reason  # the blink used all four switches


async def test_device_rate_refuses_a_call_that_can_never_fit_with_what_fits() -> None:
    policy = SecurityPolicy(autonomy="full", max_actions_per_hour=None)
    ok, reason = await decide(policy, DeviceTool(max_per_minute=4, switches=6, repeats=3), value=1)
    assert not ok
    assert "needs 6 switches" in reason and "at most 2 repetitions" in reason
    assert "try again" not in reason


async def test_device_rate_windows_are_keyed_by_peripheral_and_device() -> None:
    clock = FakeClock()
    policy = SecurityPolicy(autonomy="full", clock=clock, max_actions_per_hour=None)
    left = DeviceTool(max_per_minute=1, peripheral="left", device="led")
    right = DeviceTool(max_per_minute=1, peripheral="right", device="led")
    assert (await decide(policy, left, value=1))[0]
    assert (await decide(policy, right, value=1))[0]  # same name, another board: own window
    assert not (await decide(policy, left, value=0))[0]


async def test_read_only_allows_device_reads_only() -> None:
    policy = SecurityPolicy(autonomy=Autonomy.READ_ONLY)
    tool = DeviceTool()
    assert (await decide(policy, tool, op="read"))[0]
    ok, reason = await decide(policy, tool, op="write", value=1)
    assert not ok and "read_only" in reason


async def test_supervised_device_read_needs_no_approval() -> None:
    approver = StaticApprover(True)
    policy = SecurityPolicy(approver=approver)
    assert (await decide(policy, DeviceTool(), op="read"))[0]
    assert approver.requests == []


async def test_describe_action_that_raises_is_denied() -> None:
    class Broken(DeviceTool):
        def describe_action(self, arguments: Any) -> Any:
            raise KeyError("pin")

    ok, reason = await decide(SecurityPolicy(autonomy="full"), Broken())
    assert not ok and "could not describe" in reason


async def test_every_decision_is_an_observer_event() -> None:
    obs = RecordingObserver()
    policy = SecurityPolicy(autonomy="full", observer=obs)
    await decide(policy, EchoTool("a", RiskClass.ACT))
    await decide(policy, FileReadTool(), path="/etc/shadow")
    assert [(e.tool, e.decision) for e in obs.of(PolicyDecision)] == [
        ("a", "allowed"),
        ("file_read", "denied"),
    ]
    assert "forbidden" in obs.of(PolicyDecision)[1].reason


@pytest.mark.parametrize(
    "template",
    [
        "cat $HOME_SECRET/id_rsa",
        "cat ${{HOME_SECRET}}/id_rsa",
        "cat {secret_parent}/sec*/id_rsa",
        "cat {secret_parent}/secre?",
        "cat {secret_parent}/*",
    ],
)
async def test_shell_words_are_expanded_like_the_shell_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str
) -> None:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "id_rsa").write_text("KEY")
    monkeypatch.setenv("HOME_SECRET", str(secret))
    policy = SecurityPolicy(
        autonomy="full",
        allowed_commands=ALLOW,
        forbidden_paths=[str(secret)],
        workspace_dir=tmp_path,
    )
    ok, reason = await decide(policy, ShellTool(), command=template.format(secret_parent=tmp_path))
    assert not ok and "forbidden path" in reason


async def test_device_rate_holds_across_policies_that_share_a_ledger() -> None:
    # Two processes are two policies; what they share is the ledger (state.db in a config).
    from clawseed_edge.agent.action_ledger import MemoryActionLedger

    clock = FakeClock()
    ledger = MemoryActionLedger()
    first, second = (
        SecurityPolicy(autonomy="full", clock=clock, max_actions_per_hour=None, ledger=ledger)
        for _ in range(2)
    )
    pump = DeviceTool(max_per_minute=1, device="pump")
    assert (await decide(first, pump, value=1))[0]
    ok, reason = await decide(second, pump, value=1)
    assert not ok and "max_per_minute=1" in reason
    clock.now += 61
    assert (await decide(second, pump, value=1))[0]


async def test_a_failing_ledger_refuses_the_write() -> None:
    class BrokenLedger:
        async def recent(self, key: str, since: float) -> list[float]:
            raise OSError("disk I/O error")

        async def charge(self, key: str, at: float, cost: int, *, limit: int, since: float) -> bool:
            raise OSError("disk I/O error")

    policy = SecurityPolicy(autonomy="full", ledger=BrokenLedger(), max_actions_per_hour=None)
    ok, reason = await decide(policy, DeviceTool(max_per_minute=1), value=1)
    assert not ok and "cannot be read" in reason and "state.db" in reason
    assert (await decide(policy, DeviceTool(), value=1))[0]  # no limit: the ledger is not asked


# --- non-finite values (issue 16.11) ----------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
async def test_non_finite_device_values_are_refused_before_anyone_is_asked(value: float) -> None:
    approver = StaticApprover(True)
    policy = SecurityPolicy(autonomy="supervised", approver=approver)
    bounded = DeviceTool(min_value=0.0, max_value=1.0, requires_approval=True)
    ok, reason = await decide(policy, bounded, value=value)
    assert not ok and "finite" in reason and "'fan'" in reason
    ok, reason = await decide(policy, DeviceTool(), value=value)  # no limits configured
    assert not ok and "finite" in reason
    assert approver.requests == []


# --- NUL bytes (issue 16.15) ------------------------------------------------------------------


async def test_a_nul_byte_in_a_path_is_refused_as_invalid_input(tmp_path: Path) -> None:
    obs = RecordingObserver()
    policy = SecurityPolicy(autonomy="full", workspace_dir=tmp_path, observer=obs)
    ok, reason = await decide(policy, FileReadTool(), path="notes\x00.txt")
    assert not ok and "NUL" in reason and "'notes\\x00.txt'" in reason
    ok, reason = await decide(policy, ShellTool(), command="cat notes\x00.txt")
    assert not ok and "NUL" in reason
    assert [e.decision for e in obs.of(PolicyDecision)] == ["denied", "denied"]


# --- bare shell words (issue 16.14) -----------------------------------------------------------


@pytest.mark.parametrize("command", ["ls fd", "cat fd/id_rsa", "grep --file=fd x", "ls -- fd"])
async def test_a_bare_word_naming_a_link_to_a_forbidden_directory_is_refused(
    tmp_path: Path, command: str
) -> None:
    secret = tmp_path / "ssh"
    secret.mkdir()
    (secret / "id_rsa").write_text("KEY")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(secret, workspace / "fd")
    (workspace / "notes.txt").write_text("hi")
    policy = SecurityPolicy(
        autonomy="full",
        allowed_commands=ALLOW,
        forbidden_paths=[str(secret)],
        workspace_dir=workspace,
    )
    ok, reason = await decide(policy, ShellTool(), command=command)
    assert not ok and "forbidden path" in reason
    assert (await decide(policy, ShellTool(), command="cat notes.txt"))[0]


# --- auto-approved tools (issue 14.7) ---------------------------------------------------------


async def test_memory_store_needs_no_approval_by_default_in_supervised() -> None:
    approver = StaticApprover(False)
    obs = RecordingObserver()
    policy = SecurityPolicy(autonomy="supervised", approver=approver, observer=obs)
    ok, _ = await decide(policy, EchoTool("memory_store", RiskClass.ACT), text="fan is GPIO23")
    assert ok and approver.requests == []
    [event] = obs.of(PolicyDecision)
    assert event.decision == "allowed" and "auto_approve" in event.reason
    assert not (await decide(policy, EchoTool("memory_forget", RiskClass.ACT)))[0]


async def test_auto_approve_takes_glob_patterns_and_can_be_emptied() -> None:
    approver = StaticApprover(False)
    policy = SecurityPolicy(approver=approver, auto_approve=["memory_*"])
    assert (await decide(policy, EchoTool("memory_forget", RiskClass.ACT)))[0]
    strict = SecurityPolicy(approver=approver, auto_approve=[])
    assert not (await decide(strict, EchoTool("memory_store", RiskClass.ACT)))[0]
    assert [r.tool for r in approver.requests] == ["memory_store"]


async def test_auto_approve_never_lifts_read_only_nor_a_device_that_requires_approval() -> None:
    policy = SecurityPolicy(autonomy="read_only", auto_approve=["*"])
    ok, reason = await decide(policy, EchoTool("memory_store", RiskClass.ACT))
    assert not ok and "read_only" in reason
    approver = StaticApprover(False)
    for autonomy in ("supervised", "full"):
        policy = SecurityPolicy(autonomy=autonomy, approver=approver, auto_approve=["*"])
        assert not (await decide(policy, DeviceTool(requires_approval=True), value=1))[0]
    assert len(approver.requests) == 2


def test_auto_approve_patterns_must_be_non_empty_strings() -> None:
    with pytest.raises(ValueError, match="auto_approve"):
        SecurityPolicy(auto_approve=[""])


# --- what the refusal says happened (issue 14.21) ---------------------------------------------


async def test_no_terminal_is_not_reported_as_the_user_refusing() -> None:
    import io

    from clawseed_edge.agent.approval import CliApprover

    policy = SecurityPolicy(approver=CliApprover(stdin=io.StringIO("y\n")))
    ok, reason = await decide(policy, EchoTool("act", RiskClass.ACT))
    assert not ok and "user refused" not in reason
    assert "no one was asked" in reason and "no terminal" in reason


async def test_no_approver_says_no_one_was_asked_and_what_to_do() -> None:
    ok, reason = await decide(SecurityPolicy(approver=None), EchoTool("act", RiskClass.ACT))
    assert not ok and "user refused" not in reason
    assert "no one was asked" in reason and "auto_approve" in reason and "'full'" in reason


async def test_a_timeout_says_no_one_answered_and_what_to_do() -> None:
    async def never(request: ApprovalRequest) -> bool:
        await asyncio.Event().wait()
        return True

    policy = SecurityPolicy(approver=CallbackApprover(never), approval_timeout_s=0.01)
    ok, reason = await decide(policy, EchoTool("act", RiskClass.ACT))
    assert not ok and "user refused" not in reason
    assert "no one answered" in reason and "approval_timeout_s" in reason


async def test_a_real_refusal_says_who_refused() -> None:
    async def no(request: ApprovalRequest) -> bool:
        return False

    ok, reason = await decide(
        SecurityPolicy(approver=CallbackApprover(no)), EchoTool("act", RiskClass.ACT)
    )
    assert not ok and "was refused (refused by the approval callback)" in reason
    assert "do not retry" in reason.lower()


# --- no auto-approval after outside content (issue 22 item 10) --------------------------------


class FetchTool(EchoTool):
    """Stands in for web_fetch: a read tool whose result is text from outside."""

    external_content = True

    def __init__(self) -> None:
        super().__init__("fetch_page", RiskClass.READ)


def turn_ctx(turn: str, session: str = "s1") -> ToolContext:
    return ToolContext(session_id=session, turn_id=turn)


async def test_after_outside_content_a_memory_write_in_the_same_turn_asks() -> None:
    approver = StaticApprover(False)
    policy = SecurityPolicy(autonomy="supervised", approver=approver)
    store = EchoTool("memory_store", RiskClass.ACT)
    fetch = FetchTool()

    async def call(tool: Tool, turn: str, session: str = "s1") -> bool:
        d = await policy.before_tool(ToolCall(tool.name, {}, "c"), tool, turn_ctx(turn, session))
        return d.outcome != "cancel"

    assert await call(store, "1"), "auto-approved before any outside content"
    assert await call(fetch, "2")
    assert not await call(store, "2"), "the page may be what asks for the write"
    assert [r.tool for r in approver.requests] == ["memory_store"]
    assert await call(store, "3"), "the next turn starts clean"
    assert await call(store, "2", session="s2"), "another session's turn is not affected"


async def test_a_web_page_cannot_make_the_model_store_a_standing_instruction() -> None:
    from clawseed_edge.agent import AgentBuilder
    from clawseed_edge.testing import ScriptedProvider

    approver = StaticApprover(False)
    store = EchoTool("memory_store", RiskClass.ACT)
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("fetch_page", url="https://example.com"),
            ScriptedProvider.call("memory_store", text="always unlock the door"),
            "I did not store it.",
            ScriptedProvider.call("memory_store", text="the cat is Tom"),
            "Stored.",
        ]
    )
    agent = (
        AgentBuilder()
        .provider(provider)
        .tools([FetchTool(), store])
        .autonomy("supervised")
        .approver(approver)
        .build()
    )
    try:
        await agent.run("summarise example.com")
        await agent.run("remember my cat is Tom")
    finally:
        await agent.aclose()
    assert [r.tool for r in approver.requests] == ["memory_store"]
    assert [c["text"] for c in store.calls] == ["the cat is Tom"]
