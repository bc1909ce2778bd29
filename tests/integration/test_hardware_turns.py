"""Full turns on mock pins: ScriptedProvider -> Agent with SecurityPolicy -> PiGpio (issue 5).

Every test runs the real engine, the real policy, the real GPIO tools and gpiozero on a
MockFactory, then checks two things: the physical level of the mock pin (``MockPin.state``) and
what the model was sent back (the tool result in the provider's recorded requests).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from clawseed_edge.agent import (
    Agent,
    AgentBuilder,
    CallbackApprover,
    SecurityPolicy,
    StaticApprover,
    ToolRegistry,
)
from clawseed_edge.api import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalRequestEvent,
    ChatMessage,
    ChatRequest,
    DoneEvent,
    PinReserved,
    PolicyDecision,
    ToolCall,
    ToolResultEvent,
    TurnEvent,
)
from clawseed_edge.peripherals import (
    InputRules,
    PiGpio,
    apply_safe_state_all,
    loads_hardware_toml,
)
from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.hardware import wired_sim_board

WIRING = """
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"

[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
active_high = false
approval = true

[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "pwm_led"
max_level = 0.5

[[devices]]
name = "pump"
pin = "GPIO24"
kind = "relay"
active_high = false
max_switches_per_minute = 2

[[devices]]
name = "status_led"
pin = "GPIO27"
kind = "led"
max_switches_per_minute = 4

[[devices]]
name = "doorbell"
pin = "GPIO5"
kind = "button"
on_press = "The doorbell button was pressed."
on_release = "The doorbell button was released."
"""


class ReleaseRecordingPin(MockPWMPin):  # type: ignore[misc]
    """A MockPWMPin that remembers its level at the moment it is released.

    gpiozero's MockPWMPin.close() sets ``frequency = None``, which drives even a plain digital
    pin to 0 before it becomes an input again; on lgpio, closing only re-claims the line as an
    undriven input. So "the level left on the pin at shutdown" is read here, just before close.
    """

    level_at_release: float | None = None

    def close(self) -> None:
        if self.function == "output":
            self.level_at_release = float(self.state)
        super().close()


class FakeClock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """An Observer keeping every event."""

    def __init__(self) -> None:
        self.events: list[object] = []

    def record(self, event: object) -> None:
        self.events.append(event)

    def decisions(self) -> list[PolicyDecision]:
        return [e for e in self.events if isinstance(e, PolicyDecision)]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def board(clock: FakeClock) -> AsyncIterator[PiGpio]:
    """The WIRING on the sim board, on a fresh MockFactory with PWM pins, connected."""
    factory = MockFactory(pin_class=ReleaseRecordingPin)
    gpio = PiGpio(loads_hardware_toml(WIRING, "<wiring>"), pin_factory=factory, source="<wiring>")
    await gpio.connect()
    try:
        yield gpio
    finally:
        await gpio.disconnect()
        factory.close()


def pin(board: PiGpio, name: str) -> Any:
    """The gpiozero MockPin called ``name`` (``GPIO17``)."""
    return board.pin_factory.pin(name)


def make_agent(
    board: PiGpio,
    provider: ScriptedProvider,
    *,
    autonomy: str = "full",
    approver: Any = None,
    clock: Callable[[], float] = time.monotonic,
    observer: Recorder | None = None,
) -> Agent:
    policy = SecurityPolicy(
        autonomy=autonomy, approver=approver, max_actions_per_hour=None, clock=clock
    )
    builder = AgentBuilder().provider(provider).peripherals([board]).security_policy(policy)
    if observer is not None:
        builder.observer(observer)
    return builder.platform("test").option("clock", lambda: "").build()


async def run_turn(agent: Agent, text: str, session_id: str = "default") -> list[TurnEvent]:
    return [event async for event in agent.turn(text, session_id=session_id)]


def tool_texts(request: ChatRequest) -> list[str]:
    """The tool results a native request carries back to the model (its trailing tool messages)."""
    out: list[str] = []
    for message in reversed(request.messages):
        if message.role != "tool":
            break
        out.insert(0, message.content)
    return out


def results(events: Sequence[TurnEvent]) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent)]


def done_text(events: Sequence[TurnEvent]) -> str:
    last = events[-1]
    assert isinstance(last, DoneEvent), f"the turn did not end with an answer: {last!r}"
    return last.text


# --- 1. switch on -----------------------------------------------------------------------------


async def test_switching_red_led_on_drives_gpio17_high(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_switch", device="red_led", on=True), "The red LED is on."]
    )
    agent = make_agent(board, provider)
    led_pin = pin(board, "GPIO17")
    assert led_pin.state == 0 and led_pin.function == "output"

    events = await run_turn(agent, "turn on the red LED")

    assert led_pin.state == 1
    assert done_text(events) == "The red LED is on."
    assert len(provider.requests) == 2
    first, second = provider.requests
    # The model was offered the tool, with only the switchable devices in its enum.
    switch = next(s for s in first.tools if s.name == "gpio_switch")
    assert set(switch.parameters["properties"]["device"]["enum"]) == {
        "red_led",
        "fan",
        "lamp",
        "pump",
        "status_led",
    }
    assert "red_led: led on GPIO17" in first.messages[0].content  # the hardware prompt section
    assert tool_texts(second) == ["red_led (GPIO17) is now on"]
    tool_message = second.messages[-1]
    assert tool_message.name == "gpio_switch" and tool_message.tool_call_id == "scripted_1"


async def test_switching_off_again_in_the_next_turn(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_switch", device="red_led", on=True),
            "On.",
            ScriptedProvider.call("gpio_toggle", device="red_led"),
            "Off.",
        ]
    )
    agent = make_agent(board, provider)
    await run_turn(agent, "red LED on")
    assert pin(board, "GPIO17").state == 1
    await run_turn(agent, "toggle it")
    assert pin(board, "GPIO17").state == 0
    assert tool_texts(provider.requests[3]) == ["red_led (GPIO17) is now off"]
    pin(board, "GPIO17").assert_states([False, True, False])


# --- 2. denied device or pin ------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {"device": "green_led", "on": True},
        {"device": "GPIO17", "on": True},  # a pin is not a device
        {"device": "doorbell", "on": True},  # a write to an input
    ],
)
async def test_denied_device_stays_low_and_the_model_is_told_why(
    board: PiGpio, arguments: dict[str, Any]
) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", **arguments), "Sorry."])
    recorder = Recorder()
    agent = make_agent(board, provider, observer=recorder)
    bell_pin = pin(board, "GPIO5")
    bell_level = bell_pin.state  # pulled up: a released button reads high

    events = await run_turn(agent, "switch it on")

    assert pin(board, "GPIO17").state == 0
    assert bell_pin.state == bell_level and bell_pin.function == "input"
    assert all(p.state in (0, bell_level) for p in board.pin_factory.pins.values())
    [text] = tool_texts(provider.requests[1])
    # The tool's schema enumerates the devices it may switch: the call is refused against it
    # before the policy is asked, and the model reads the devices it can use.
    assert text.startswith("Error: the arguments of 'gpio_switch' do not match its schema: ")
    assert "arguments.device must be one of" in text and "'red_led'" in text
    assert f"'{arguments['device']}'" not in text.split("must be one of", 1)[1]
    [result] = results(events)
    assert not result.result.success
    assert recorder.decisions() == []  # nothing reached the policy, let alone the pin
    assert done_text(events) == "Sorry."


async def test_unknown_tool_touches_no_pin(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_write_pin", pin="GPIO17", value=1), "Sorry."]
    )
    agent = make_agent(board, provider)
    await run_turn(agent, "set GPIO17 high")
    assert pin(board, "GPIO17").state == 0
    [text] = tool_texts(provider.requests[1])
    assert "unknown tool 'gpio_write_pin'" in text and "gpio_switch" in text


@pytest.mark.parametrize(("pin_name", "reason"), [("GPIO0", "ID EEPROM"), ("BOARD2", "5 V power")])
def test_reserved_pin_in_config_is_refused_at_load(pin_name: str, reason: str) -> None:
    wiring = (
        f'[hardware]\nboard = "rpi4b"\n[[devices]]\nname = "tx"\npin = "{pin_name}"\nkind = "led"\n'
    )
    with pytest.raises(PinReserved) as info:
        wired_sim_board(wiring)
    message = str(info.value)
    assert "<devices_toml>" in message and "'tx'" in message and reason in message


# --- 3. approval ------------------------------------------------------------------------------


async def test_approval_granted_switches_the_fan_in_full_autonomy(board: PiGpio) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="fan", on=True), "Ok"])
    approver = StaticApprover(True)
    recorder = Recorder()
    agent = make_agent(board, provider, approver=approver, observer=recorder)
    fan_pin = pin(board, "GPIO23")
    assert fan_pin.state == 1  # active low relay, off

    events = await run_turn(agent, "start the fan")

    assert fan_pin.state == 0  # on: the relay input is pulled low
    [request] = approver.requests
    assert request.tool == "gpio_switch" and request.summary == "switch fan (GPIO23) on"
    asked = [e for e in events if isinstance(e, ApprovalRequestEvent)]
    assert [e.request for e in asked] == [request]
    # The approval request comes before the call's result.
    assert events.index(asked[0]) < events.index(results(events)[0])
    assert tool_texts(provider.requests[1]) == ["fan (GPIO23) is now on"]
    assert [d.decision for d in recorder.decisions()] == ["approved"]


async def test_approval_refused_keeps_the_fan_off_and_says_so(board: PiGpio) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="fan", on=True), "Ok"])
    seen: list[tuple[ApprovalRequest, bool]] = []

    async def ask(request: ApprovalRequest) -> ApprovalDecision:
        seen.append((request, pin(board, "GPIO23").state))  # the pin, while the user decides
        return ApprovalDecision(False, "not while I am on the phone")

    agent = make_agent(board, provider, approver=CallbackApprover(ask))
    events = await run_turn(agent, "start the fan")

    assert pin(board, "GPIO23").state == 1
    assert [(r.summary, level) for r, level in seen] == [("switch fan (GPIO23) on", 1)]
    assert any(isinstance(e, ApprovalRequestEvent) for e in events)
    [text] = tool_texts(provider.requests[1])
    assert text == (
        "Error: Refused by the security policy: approval for 'switch fan (GPIO23) on' was "
        "refused (not while I am on the phone); it did not run. Do not retry it unless the user "
        "asks."
    )


async def test_approval_while_user_decides_nothing_switched(board: PiGpio) -> None:
    """A CallbackApprover returning a bool; the switch happens only after the yes."""
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="fan", on=True), "Ok"])
    levels: list[int] = []

    async def ask(request: ApprovalRequest) -> bool:
        levels.append(pin(board, "GPIO23").state)
        return True

    agent = make_agent(board, provider, approver=CallbackApprover(ask))
    await run_turn(agent, "start the fan")
    assert levels == [1] and pin(board, "GPIO23").state == 0


async def test_device_without_approval_is_not_asked_in_full_autonomy(board: PiGpio) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="red_led", on=True)])
    provider.add("Done.")
    approver = StaticApprover(False)
    agent = make_agent(board, provider, approver=approver)
    events = await run_turn(agent, "red on")
    assert approver.requests == [] and not any(isinstance(e, ApprovalRequestEvent) for e in events)
    assert pin(board, "GPIO17").state == 1


async def test_approval_device_without_an_approver_is_refused(board: PiGpio) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="fan", on=True), "Ok"])
    agent = make_agent(board, provider, approver=None)
    await run_turn(agent, "start the fan")
    assert pin(board, "GPIO23").state == 1
    [text] = tool_texts(provider.requests[1])
    assert "no approver is set up, so no one was asked" in text
    assert "approval = true" in text  # and why full autonomy would not help


# --- 4. rate limit ----------------------------------------------------------------------------


async def test_switch_rate_limit_refuses_the_extra_switch(board: PiGpio, clock: FakeClock) -> None:
    calls = [
        ToolCall("gpio_switch", {"device": "pump", "on": True}),
        ToolCall("gpio_switch", {"device": "pump", "on": False}),
        ToolCall("gpio_switch", {"device": "pump", "on": True}),
    ]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "Done."])
    recorder = Recorder()
    agent = make_agent(board, provider, clock=clock, observer=recorder)
    pump_pin = pin(board, "GPIO24")

    await run_turn(agent, "run the pump briefly, then again")

    assert pump_pin.state == 1  # active low: off, as the second call left it
    # Floating input at creation, output off (high), on (low), off (high); no third switch.
    assert [st.state for st in pump_pin.states] == [False, True, False, True]
    texts = tool_texts(provider.requests[1])
    assert texts[:2] == ["pump (GPIO24) is now on", "pump (GPIO24) is now off"]
    assert texts[2].startswith("Error: Denied by the security policy: ")
    assert "device 'pump' reached its max_per_minute=2; try again in 60 s" in texts[2]
    assert [d.decision for d in recorder.decisions()] == ["allowed", "allowed", "denied"]

    # A minute later the policy's window has passed (it is the only switch counter).
    clock.now += 61
    provider.add(ScriptedProvider.call("gpio_switch", device="pump", on=True), "On.")
    await run_turn(agent, "pump on")
    assert pump_pin.state == 0
    assert tool_texts(provider.requests[3]) == ["pump (GPIO24) is now on"]


async def test_blink_longer_than_the_switch_limit_is_not_retried(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_blink", device="status_led", count=3, on_ms=20, off_ms=20)]
    )
    provider.add(".")
    await run_turn(make_agent(board, provider), "blink the status LED")
    assert [st.state for st in pin(board, "GPIO27").states] == [False]  # it never blinked
    [text] = tool_texts(provider.requests[1])
    assert text.startswith("Error: Denied by the security policy: status_led may switch at most 4")
    # Retrying the same call cannot succeed (it needs 6 switches, the limit is 4 per minute),
    # so the model must not be invited to retry it.
    assert "try again" not in text
    assert "blink it at most 2 times" in text


# --- 5. read_only -----------------------------------------------------------------------------


async def test_read_only_autonomy_reads_but_does_not_switch(board: PiGpio) -> None:
    calls = [
        ToolCall("gpio_read", {"device": "doorbell"}),
        ToolCall("gpio_switch", {"device": "red_led", "on": True}),
        ToolCall("hardware_status", {}),
    ]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "Read only."])
    agent = make_agent(board, provider, autonomy="read_only")

    await run_turn(agent, "is anyone at the door? then light the LED")

    assert pin(board, "GPIO17").state == 0
    read, switch, status = tool_texts(provider.requests[1])
    assert read == "doorbell (GPIO5) is released"
    assert switch.startswith("Error: Denied by the security policy: 'gpio_switch' writes device")
    assert "autonomy is read_only" in switch
    assert "red_led: led on GPIO17, off" in status and "fan: relay on GPIO23, off" in status


async def test_supervised_autonomy_asks_for_switches_not_reads(board: PiGpio) -> None:
    calls = [
        ToolCall("gpio_read", {"device": "red_led"}),
        ToolCall("gpio_switch", {"device": "red_led", "on": True}),
    ]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "Done."])
    approver = StaticApprover(True)
    agent = make_agent(board, provider, autonomy="supervised", approver=approver)
    events = await run_turn(agent, "check the LED, then light it")
    assert [r.summary for r in approver.requests] == ["switch red_led (GPIO17) on"]
    assert sum(isinstance(e, ApprovalRequestEvent) for e in events) == 1
    assert tool_texts(provider.requests[1]) == [
        "red_led (GPIO17) is off",
        "red_led (GPIO17) is now on",
    ]
    assert pin(board, "GPIO17").state == 1


# --- 6. PWM cap -------------------------------------------------------------------------------


async def test_pwm_cap_is_enforced_through_the_engine(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_set_level", device="lamp", level=0.9),
            ScriptedProvider.call("gpio_set_level", device="lamp", level=0.4),
            "Dimmed to 40%.",
        ]
    )
    agent = make_agent(board, provider)
    lamp_pin = pin(board, "GPIO18")

    await run_turn(agent, "lamp to 90%")

    assert lamp_pin.state == pytest.approx(0.4)
    assert max(s.state for s in lamp_pin.states) <= 0.5
    [refused] = tool_texts(provider.requests[1])
    assert "value 0.9 for device 'lamp' is above its limit max_value=0.5" in refused
    assert tool_texts(provider.requests[2]) == ["lamp (GPIO18) is now at level 0.4"]
    # The schema the model saw names the cap.
    level_spec = next(s for s in provider.requests[0].tools if s.name == "gpio_set_level")
    assert "lamp: 0..0.5" in level_spec.parameters["properties"]["level"]["description"]


async def test_pwm_switch_on_goes_to_the_cap(board: PiGpio) -> None:
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="lamp", on=True), "."])
    await run_turn(make_agent(board, provider), "lamp on")
    assert pin(board, "GPIO18").state == pytest.approx(0.5)
    assert tool_texts(provider.requests[1]) == ["lamp (GPIO18) is now at level 0.5"]


async def test_pwm_cap_holds_without_the_policy(board: PiGpio) -> None:
    """Defence in depth: an engine with no SecurityPolicy at all still cannot exceed the cap."""
    provider = ScriptedProvider(
        [ScriptedProvider.call("gpio_set_level", device="lamp", level=0.9), "."]
    )
    registry = ToolRegistry()
    registry.register_many(board.tools())
    agent = Agent(provider=provider, registry=registry, peripherals=[board])
    await run_turn(agent, "lamp to 90%")
    assert pin(board, "GPIO18").state == 0
    [text] = tool_texts(provider.requests[1])
    assert text == "Error: level 0.9 is outside lamp's allowed range 0..0.5"


# --- 7. safe state ----------------------------------------------------------------------------


async def switch_everything_on(board: PiGpio) -> ScriptedProvider:
    calls = [
        ToolCall("gpio_switch", {"device": "red_led", "on": True}),
        ToolCall("gpio_switch", {"device": "pump", "on": True}),
        ToolCall("gpio_set_level", {"device": "lamp", "level": 0.3}),
    ]
    provider = ScriptedProvider([ScriptedProvider.calls(*calls), "All on."])
    await run_turn(make_agent(board, provider), "everything on")
    assert tool_texts(provider.requests[1]) == [
        "red_led (GPIO17) is now on",
        "pump (GPIO24) is now on",
        "lamp (GPIO18) is now at level 0.3",
    ]
    assert pin(board, "GPIO17").state == 1
    assert pin(board, "GPIO24").state == 0  # active low relay: on is low
    assert pin(board, "GPIO18").state == pytest.approx(0.3)
    return provider


def assert_safe_levels(board: PiGpio) -> None:
    assert pin(board, "GPIO17").state == 0  # led off
    assert pin(board, "GPIO24").state == 1  # active low relay off: the pin is HIGH
    assert pin(board, "GPIO23").state == 1
    assert pin(board, "GPIO18").state == 0  # PWM off


async def test_safe_state_on_disconnect(board: PiGpio) -> None:
    await switch_everything_on(board)
    await board.disconnect()
    released = {
        name: pin(board, name).level_at_release for name in ("GPIO17", "GPIO24", "GPIO23", "GPIO18")
    }
    # The level each output was left at when it was released: the safe one. The active-low
    # relays are HIGH (off).
    assert released == {"GPIO17": 0, "GPIO24": 1, "GPIO23": 1, "GPIO18": 0}
    assert [st.state for st in pin(board, "GPIO24").states][:4] == [False, True, False, True]
    # Released: the pins are inputs again (gpiozero's close), no longer driven.
    assert all(pin(board, n).function == "input" for n in released)
    assert not board.connected


async def test_safe_state_on_estop_keeps_running(board: PiGpio) -> None:
    await switch_everything_on(board)
    await board.apply_safe_state()
    assert_safe_levels(board)
    assert board.connected and pin(board, "GPIO24").function == "output"
    # The agent keeps working after an estop.
    provider = ScriptedProvider([ScriptedProvider.call("gpio_switch", device="red_led", on=True)])
    provider.add("On again.")
    await run_turn(make_agent(board, provider), "red on")
    assert pin(board, "GPIO17").state == 1


async def test_safe_state_on_estop_of_all_peripherals(board: PiGpio) -> None:
    await switch_everything_on(board)
    assert await apply_safe_state_all([board]) == []
    assert_safe_levels(board)


# --- 8. button edge -> event -> turn ----------------------------------------------------------


async def test_button_edge_becomes_a_turn(board: PiGpio) -> None:
    rules = InputRules(board.hardware.devices)
    bell_pin = pin(board, "GPIO5")
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_read", device="doorbell"),
            ScriptedProvider.call("gpio_switch", device="red_led", on=True),
            "Someone is at the door; I lit the red LED.",
        ]
    )
    agent = make_agent(board, provider)
    async with board.events() as events:
        bell_pin.drive_low()  # pull-up button: pressed pulls the pin low
        async with asyncio.timeout(5):  # a bound against a hang, not a timing assertion
            event = await anext(events)
    assert (event.device, event.value, event.pin) == ("doorbell", 1, "GPIO5")
    message = rules.message_for(event)
    assert message is not None and message.text == "The doorbell button was pressed."

    turn = await run_turn(agent, message.text, session_id="doorbell")

    assert done_text(turn) == "Someone is at the door; I lit the red LED."
    first = provider.requests[0]
    assert first.messages[-1] == ChatMessage.user("The doorbell button was pressed.")
    assert tool_texts(provider.requests[1]) == ["doorbell (GPIO5) is pressed"]
    assert pin(board, "GPIO17").state == 1
    bell_pin.drive_high()  # released (closing a held Button waits out gpiozero's hold_time)


async def test_button_release_and_rule_stream(board: PiGpio) -> None:
    rules = InputRules(board.hardware.devices)
    bell_pin = pin(board, "GPIO5")
    got: list[str] = []
    async with board.events() as events:
        bell_pin.drive_low()
        bell_pin.drive_high()
        async with asyncio.timeout(5):
            async for message in rules.messages(events):
                got.append(message.text)
                if len(got) == 2:
                    break
    assert got == ["The doorbell button was pressed.", "The doorbell button was released."]


# --- 9. prompt-guided path --------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
async def test_prompt_guided_turn_drives_the_pin(board: PiGpio, streaming: bool) -> None:
    markup = '<tool_call>{"name": "gpio_switch", "arguments": {"device": "red_led", "on": true}}'
    provider = ScriptedProvider(
        [f"Switching it on now.\n{markup}</tool_call>", "The red LED is on."],
        native_tools=False,
        streaming=streaming,
    )
    agent = make_agent(board, provider)
    assert type(agent.dispatcher).__name__ == "XmlToolDispatcher"

    events = await run_turn(agent, "turn on the red LED")

    assert pin(board, "GPIO17").state == 1
    assert done_text(events) == "The red LED is on."
    first, second = provider.requests
    assert first.tools == ()  # tools are described in the prompt instead
    assert "gpio_switch" in first.messages[0].content and "<tool_call>" in first.messages[0].content
    last = second.messages[-1]
    assert last.role == "user"
    assert '<tool_result name="gpio_switch"' in last.content and 'status="ok"' in last.content
    assert "red_led (GPIO17) is now on" in last.content
    # The markup is not shown to the user.
    chunks = "".join(getattr(e, "text", "") for e in events if e.type == "chunk")
    assert "<tool_call>" not in chunks and "Switching it on now." in chunks


async def test_prompt_guided_denial_reaches_the_model(board: PiGpio) -> None:
    provider = ScriptedProvider(
        [
            ScriptedProvider.tool_call_markup("gpio_set_level", device="lamp", level=0.9),
            "The lamp is capped at 50%.",
        ],
        native_tools=False,
    )
    await run_turn(make_agent(board, provider), "lamp to 90%")
    assert pin(board, "GPIO18").state == 0
    last = provider.requests[1].messages[-1].content
    assert 'status="error"' in last and "above its limit max_value=0.5" in last


async def test_prompt_guided_call_inside_thinking_never_runs(board: PiGpio) -> None:
    markup = ScriptedProvider.tool_call_markup("gpio_switch", device="red_led", on=True)
    provider = ScriptedProvider(
        [f"<think>maybe {markup}</think>I will not switch anything."], native_tools=False
    )
    events = await run_turn(make_agent(board, provider), "what would you do?")
    assert pin(board, "GPIO17").state == 0
    assert results(events) == [] and done_text(events) == "I will not switch anything."
    assert len(provider.requests) == 1


# --- the testing kit's fixtures, as a user would combine them ---------------------------------


async def test_user_style_with_plugin_fixtures(
    sim_board: Any, agent_builder: AgentBuilder, scripted_provider: ScriptedProvider, tmp_path: Path
) -> None:
    board = await sim_board('[[devices]]\nname = "red_led"\npin = "GPIO17"\nkind = "led"\n')
    scripted_provider.add(ScriptedProvider.call("gpio_switch", device="red_led", on=True), "On.")
    agent = agent_builder.peripherals([board]).build()  # supervised, approver says yes
    assert await agent.run("red LED on") == "On."
    assert board.pin_factory.pin("GPIO17").state == 1
    assert tool_texts(scripted_provider.requests[1]) == ["red_led (GPIO17) is now on"]
