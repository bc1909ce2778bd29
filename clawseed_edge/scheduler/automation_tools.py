"""The agent's automation tools: ``automation_add``, ``automation_list``, ``automation_remove``.

The same shape as the cron tools (:mod:`.tools`): ``automation_add`` and ``automation_remove``
are ``act`` (supervised autonomy asks first), ``automation_list`` reads. A rule is checked
exactly as an ``[[automations]]`` table is (:func:`~.automation_spec.validate_automation`: the
same errors, naming the field), its names against the sensors and devices that exist, its tool
against the agent's tools. In supervised autonomy, creating a rule that calls a tool or prompts
the model always asks a human, even when ``automation_add`` is auto-approved: it acts later with
no one watching. When a rule fires, its action passes the SecurityPolicy like any call.

The tools work on the service's :class:`~.automations.Automations` or, in ``agent``/``chat``,
on an :class:`AutomationBook` (state.db, and the running service told to look again).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from clawseed_edge.api import (
    BaseTool,
    ConfigInvalid,
    DeviceAction,
    RiskClass,
    ToolContext,
    ToolResult,
)
from clawseed_edge.config.automations import AutomationConfig

from .automation_spec import (
    NAME,
    NOTIFY_PLACES,
    CheckTool,
    describe_automation,
    validate_automation,
)
from .automation_store import AutomationStore, TooManyAutomations
from .book import NO_SERVICE_NOTE
from .rules import MAX_CHARS

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent

__all__ = [
    "AutomationAdd",
    "AutomationBook",
    "AutomationList",
    "AutomationRemove",
    "add_automation",
    "automation_tools",
]

_ACTION_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "description": "One of: {tool, arguments} (call a tool), {prompt} (ask yourself), "
    "{message} (send a notification).",
    "properties": {
        "tool": {"type": "string", "maxLength": 64},
        "arguments": {"type": "object"},
        "prompt": {"type": "string", "maxLength": 4000},
        "message": {"type": "string", "maxLength": 500},
    },
    "additionalProperties": False,
}


class AutomationTarget(Protocol):
    """What the tools work on: the service's runner or an :class:`AutomationBook`."""

    store: AutomationStore | None
    known: Mapping[str, Sequence[str]] | None

    async def automations_changed(self) -> str | None: ...


class AutomationBook:
    """The automations in state.db for a process that does not run them (``agent``, ``chat``).

    Args:
        store: The rules in state.db.
        notify: Tells a running service the rules changed; returns False when none runs.
        known: Sensor/device names and what each publishes.
    """

    def __init__(
        self,
        store: AutomationStore,
        *,
        notify: Callable[[], Awaitable[bool]],
        known: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.store: AutomationStore | None = store
        self.known = known
        self._notify = notify

    async def automations_changed(self) -> str | None:
        return None if await self._notify() else NO_SERVICE_NOTE


def automation_tools(target: AutomationTarget, agent: Agent, *, supervised: bool) -> list[BaseTool]:
    """The three tools over ``target``, checking tool actions against ``agent``'s tools."""
    return [
        AutomationAdd(target, agent, supervised=supervised),
        AutomationList(target),
        AutomationRemove(target),
    ]


async def add_automation(
    store: AutomationStore,
    spec: Mapping[str, Any],
    *,
    origin: str,
    known: Mapping[str, Sequence[str]] | None,
    check_tool: CheckTool | None,
    now: float | None = None,
) -> str:
    """Check ``spec`` (an ``[[automations]]`` table) and store it; returns it in words.

    Raises:
        ConfigInvalid: The field that is wrong and what to write; a name that is taken.
        TooManyAutomations: The store is full.
    """
    try:
        config = msgspec.convert(dict(spec), AutomationConfig)
    except msgspec.ValidationError as exc:
        raise ConfigInvalid(str(exc)) from None
    state = validate_automation(config, known=known, check_tool=check_tool)
    if not await store.add(config, origin, time.time() if now is None else now):
        raise ConfigInvalid(
            f"an automation named {config.name!r} exists; pick another name or remove it first",
            key="name",
        )
    return describe_automation(config, state.for_s)


class AutomationAdd(BaseTool):
    """Create a rule that acts on readings or input events without the model."""

    name = "automation_add"
    description = (
        "Create an automation: a rule that runs without you. when: a condition on readings "
        "(SENSOR.QUANTITY compared with a number, e.g. 'greenhouse.temperature > 30') or an "
        "input's state (e.g. 'door.open', 'button.pressed'), joined by and/or/not; for: how long "
        "it must hold ('2m'); do: the action when it fires ({tool, arguments}, {prompt} or "
        "{message}); until: the reset condition (hysteresis); then: the action on reset; "
        "notify: where firings are announced. Returns the rule in words."
    )
    risk = RiskClass.ACT
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": NAME.pattern},
            "when": {"type": "string", "maxLength": MAX_CHARS},
            "for": {"type": "string", "maxLength": 20},
            "until": {"type": "string", "maxLength": MAX_CHARS},
            "do": _ACTION_SCHEMA,
            "then": _ACTION_SCHEMA,
            "notify": {"type": "array", "items": {"enum": list(NOTIFY_PLACES)}, "maxItems": 3},
        },
        "required": ["name", "when"],
        "additionalProperties": False,
    }

    def __init__(self, target: AutomationTarget, agent: Agent, *, supervised: bool) -> None:
        self.target = target
        self.agent = agent
        self.supervised = supervised

    def describe_action(self, arguments: Mapping[str, Any]) -> DeviceAction | None:
        # A rule that calls a tool or prompts the model acts later, unwatched: in supervised
        # autonomy a human approves its creation even when automation_add is auto-approved.
        actions = [a for a in (arguments.get("do"), arguments.get("then")) if isinstance(a, dict)]
        acting = [a for a in actions if "tool" in a or "prompt" in a]
        if not (self.supervised and acting):
            return None
        what = "; ".join(f"call {a['tool']}" if "tool" in a else "ask the model" for a in acting)
        return DeviceAction(
            "automations",
            "rule",
            "write",
            requires_approval=True,
            summary=f"create automation {str(arguments.get('name', '?'))[:64]!r}: when "
            f"{str(arguments.get('when', ''))[:80]}, {what[:120]}",
        )

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        store = self.target.store
        if store is None:
            return ToolResult.fail("automations are off here (no state.db)")
        from .tools import check_tool_job

        spec = {k: v for k, v in arguments.items() if v is not None}
        try:
            words = await add_automation(
                store,
                spec,
                origin="agent",
                known=self.target.known,
                check_tool=lambda n, a: check_tool_job(self.agent, n, a),
            )
        except (ConfigInvalid, TooManyAutomations) as exc:
            return ToolResult.fail(str(exc))
        note = await self.target.automations_changed()
        text = f"Created automation {arguments['name']!r}. {words}"
        if note:
            text += f"\n{note}"
        return ToolResult.ok(text, data={"automation": arguments["name"], "rule": words})


class AutomationList(BaseTool):
    """List the automations, what each does, and their latest firing."""

    name = "automation_list"
    description = "List the automations: name, the rule in words, where it came from, last firing."
    risk = RiskClass.READ

    def __init__(self, target: AutomationTarget) -> None:
        self.target = target

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        store = self.target.store
        if store is None:
            return ToolResult.ok("No automations (no state.db).", data=[])
        rules = await store.list()
        if not rules:
            return ToolResult.ok("No automations exist.", data=[])
        lines, data = [], []
        for entry in rules:
            c = entry.config
            try:
                words = describe_automation(c, validate_automation(c).for_s)
            except ConfigInvalid as exc:
                words = f"(does not check: {exc})"
            last = await store.firings(c.name, limit=1)
            fired = (
                f"last {last[0].event} {time.strftime('%Y-%m-%d %H:%M', time.localtime(last[0].at))}"
                f" ({'ok' if last[0].ok else 'refused/failed'})"
                if last
                else "never fired"
            )
            lines.append(f"- {c.name} ({entry.origin}): {words} {fired}.")
            data.append({"name": c.name, "origin": entry.origin, "rule": words})
        return ToolResult.ok("\n".join(lines)[:8000], data=data)


class AutomationRemove(BaseTool):
    """Remove an automation by name."""

    name = "automation_remove"
    description = "Remove an automation by its name (see automation_list)."
    risk = RiskClass.ACT
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 64}},
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, target: AutomationTarget) -> None:
        self.target = target

    async def execute(self, arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
        name = str(arguments["name"])
        store = self.target.store
        entry = None if store is None else await store.get(name)
        if store is None or entry is None:
            return ToolResult.fail(f"no automation is named {name[:64]!r}; see automation_list")
        if entry.origin == "config":
            return ToolResult.fail(
                f"automation {name!r} is declared in the config file ([[automations]]); it "
                "comes back at the next start, so the user removes it there"
            )
        await store.remove(name)
        await self.target.automations_changed()
        return ToolResult.ok(f"Removed automation {name!r}.")
