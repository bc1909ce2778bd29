"""Which tools a request offers: at most max_tools, the message's first; narrowed to the policy."""

from __future__ import annotations

from types import SimpleNamespace

from clawseed_edge.agent.offer import (
    SMALL_MODEL_TOOLS,
    narrow_to_policy,
    offered_tools,
    select_tools,
)
from clawseed_edge.api import DeviceAction, ToolSpec

DEVICE = {"type": "string", "enum": ["red_led", "fan"]}


def spec(name: str, device: bool = False) -> ToolSpec:
    props = {"device": DEVICE} if device else {}
    return ToolSpec(name, name, {"type": "object", "properties": props})


SPECS = (
    *(spec(f"memory_tool_{i}") for i in range(10)),
    spec("gpio_switch", device=True),
    spec("gpio_read", device=True),
    spec("sensor_read"),
)


class Switch:
    """A device tool that says what a call would do, as the GPIO tools do."""

    risk = "act"

    def describe_action(self, args: dict[str, object]) -> DeviceAction:
        device = str(args["device"])
        return DeviceAction(device, "relay", "write", requires_approval=device == "fan")


class Registry:
    def get(self, name: str) -> object | None:
        return Switch() if name == "gpio_switch" else None


def test_the_tools_a_message_names_come_first_within_the_limit() -> None:
    chosen = [s.name for s in select_tools("turn on the red led", SPECS, 3)]
    assert chosen == ["gpio_switch", "gpio_read", "sensor_read"]


def test_automatic_max_tools_is_eight_for_a_small_local_model_and_all_otherwise() -> None:
    small = SimpleNamespace(provider=SimpleNamespace(local_small_model=True), max_tools=None)
    remote = SimpleNamespace(provider=SimpleNamespace(), max_tools=None)
    assert len(offered_tools(small, "hi", SPECS)) == SMALL_MODEL_TOOLS
    assert len(offered_tools(remote, "hi", SPECS)) == len(SPECS)


def test_read_only_keeps_no_tool_that_acts_and_no_approver_drops_the_approval_device() -> None:
    read_only = SimpleNamespace(autonomy="read_only", approver=None)
    assert "gpio_switch" not in [s.name for s in narrow_to_policy(SPECS, Registry(), read_only)]
    full = SimpleNamespace(autonomy="full", approver=None)
    narrowed = {s.name: s for s in narrow_to_policy(SPECS, Registry(), full)}
    assert narrowed["gpio_switch"].parameters["properties"]["device"]["enum"] == ["red_led"]
    asked = SimpleNamespace(autonomy="full", approver=object())
    kept = {s.name: s for s in narrow_to_policy(SPECS, Registry(), asked)}
    assert kept["gpio_switch"].parameters["properties"]["device"]["enum"] == ["red_led", "fan"]
