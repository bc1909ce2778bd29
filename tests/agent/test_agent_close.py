"""Agent lifecycle: a closed agent refuses turns; aclose stops accepting, aborts turns, applies
safe states, then closes the rest, each step bounded and each failure logged."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawseed_edge.agent import Agent, AgentBuilder, StaticApprover
from clawseed_edge.api import AbortedEvent, AgentClosed, Lifecycle, ResourceClosed
from clawseed_edge.testing import ScriptedProvider

from ._tools import SlowTool


async def test_closers_run_once_in_reverse_order_even_if_one_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = AgentBuilder().provider(ScriptedProvider([])).approver(StaticApprover(True)).build()
    order: list[str] = []

    async def first() -> None:
        order.append("memory")

    async def broken() -> None:
        order.append("broken")
        raise OSError("disk gone")

    async def last() -> None:
        order.append("peripherals")

    for closer in (first, broken, last):
        agent.on_close(closer)
    await agent.aclose()
    await agent.aclose()
    assert order == ["peripherals", "broken", "memory"]
    assert "a resource closer failed" in caplog.text


# --- lifecycle: a closed agent refuses work; shutdown runs in order, each step bounded ----


class OrderedProvider(ScriptedProvider):
    def __init__(self, order: list[str], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order = order

    async def aclose(self) -> None:
        self.order.append("provider closed")
        await super().aclose()


class SafeStateBoard:
    """A peripheral that records its safe state (and may fail or hang doing it)."""

    board_type = "sim"

    def __init__(self, name: str, order: list[str], *, fail: bool = False) -> None:
        self.name = name
        self.order = order
        self.fail = fail

    async def connect(self) -> None:
        return None

    async def disconnect(self) -> None:
        self.order.append(f"{self.name} disconnected")

    async def apply_safe_state(self) -> None:
        self.order.append(f"{self.name} safe state")
        if self.fail:
            raise OSError("the bus is gone")

    def describe(self) -> str:
        return f"{self.name}: a simulated board"

    def tools(self) -> list[Any]:
        return []


def _agent(provider: ScriptedProvider, *boards: Any, **options: Any) -> Agent:
    builder = AgentBuilder().provider(provider).approver(StaticApprover(True))
    for name, value in options.items():
        builder = builder.option(name, value)
    return builder.peripherals(list(boards)).build()


async def test_a_closed_agent_refuses_a_turn_with_a_clear_error() -> None:
    agent = _agent(ScriptedProvider(["never"]))
    assert agent.state is Lifecycle.OPEN
    await agent.aclose()
    assert agent.state is Lifecycle.CLOSED
    with pytest.raises(AgentClosed, match=r"the agent is closed and takes no more turns"):
        agent.turn("hello")
    with pytest.raises(AgentClosed) as info:
        await agent.run("hello")
    assert isinstance(info.value, ResourceClosed) and info.value.code == "agent_closed"


async def test_a_turn_made_before_close_and_read_after_it_is_refused() -> None:
    provider = ScriptedProvider(["never"])
    agent = _agent(provider)
    events = agent.turn("hello")
    await agent.aclose()
    with pytest.raises(AgentClosed):
        await anext(events)
    assert provider.requests == []


async def test_shutdown_order_stop_accepting_abort_safe_state_then_the_rest() -> None:
    order: list[str] = []
    slow = SlowTool()
    provider = OrderedProvider(order, [ScriptedProvider.call("slow"), "after"])
    board = SafeStateBoard("pi", order)
    agent = _agent(provider, board)
    agent.registry.register(slow)
    refused: list[str] = []

    async def closer() -> None:
        order.append("closer")
        with pytest.raises(AgentClosed, match="closing"):  # still closing: no turn now
            agent.turn("one more")
        refused.append("turn refused while closing")

    agent.on_close(board.disconnect)
    agent.on_close(closer)
    events: list[Any] = []

    async def consume() -> None:
        async for event in agent.turn("go"):
            events.append(event)
        order.append("turn aborted")

    task = asyncio.create_task(consume())
    await asyncio.wait_for(slow.started.wait(), 5)
    await agent.aclose()
    await task
    assert slow.cancelled
    assert isinstance(events[-1], AbortedEvent) and events[-1].reason == "the agent is closing"
    assert order == [
        "turn aborted",
        "pi safe state",
        "closer",
        "pi disconnected",
        "provider closed",
    ]
    assert refused == ["turn refused while closing"]


async def test_a_hanging_or_failing_step_is_logged_and_the_next_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    order: list[str] = []
    provider = OrderedProvider(order, [])
    broken, good = SafeStateBoard("broken", order, fail=True), SafeStateBoard("pi", order)
    agent = _agent(provider, broken, good, close_timeout_s=0.05)

    async def hanging() -> None:
        order.append("hanging closer")
        await asyncio.Event().wait()  # never returns: the step's bound ends it

    agent.on_close(good.disconnect)
    agent.on_close(hanging)
    await agent.aclose()
    assert order == [
        "broken safe state",
        "pi safe state",
        "hanging closer",
        "pi disconnected",
        "provider closed",
    ]
    assert "safe state of 'broken' failed" in caplog.text
    assert "a resource closer did not finish within 0.05 s" in caplog.text


@pytest.mark.parametrize(
    ("attribute", "value", "applied"),
    [
        ("connected", False, False),
        ("connected", True, True),
        ("state", Lifecycle.UNOPENED, False),
        ("state", Lifecycle.OPEN, True),
    ],
)
async def test_safe_state_only_for_a_peripheral_that_holds_hardware(
    attribute: str, value: object, applied: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # `clawseed-edge tools list` assembles without connecting: closing must not fail on it.
    order: list[str] = []
    board = SafeStateBoard("pi", order)
    setattr(board, attribute, value)
    await _agent(OrderedProvider(order, []), board).aclose()
    assert ("pi safe state" in order) is applied
    assert "failed" not in caplog.text


async def test_concurrent_closes_run_the_steps_once() -> None:
    order: list[str] = []
    agent = _agent(OrderedProvider(order, []), SafeStateBoard("pi", order))
    await asyncio.gather(agent.aclose(), agent.aclose())
    assert order == ["pi safe state", "provider closed"]


def test_close_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="close_timeout_s must be a positive number, got 0"):
        _agent(ScriptedProvider([]), close_timeout_s=0)
