"""``[[automations]]``: rules on sensor readings that act without the model.

::

    [[automations]]
    name = "too_hot"
    when = "greenhouse.temperature > 30"
    for = "2m"
    do = { tool = "gpio_switch", arguments = { device = "fan", on = true } }
    until = "greenhouse.temperature < 28"
    then = { tool = "gpio_switch", arguments = { device = "fan", on = false } }

The runner (:class:`Automations`) takes the sampler's filtered readings, keeps the latest value
of each ``SENSOR.QUANTITY``, and runs each rule's :class:`~.rules.RuleState`. An action is a
tool call through the agent's hook pipeline, the SecurityPolicy first (so an approval device
asks, read_only refuses, rate limits count), exactly as a scheduled job's. The emergency stop
pauses every rule (and forgets what was being held) until :meth:`Automations.resume`. Every
firing is recorded (the last :data:`MAX_FIRINGS`) and listed.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clawseed_edge.api import ConfigInvalid, SensorReading, ToolCall, ToolContext
from clawseed_edge.config.automations import AutomationConfig

from .rules import Condition, ExpressionInvalid, RuleState, parse_condition

__all__ = ["MAX_FIRINGS", "AutomationConfig", "Automations", "validate_automations"]

log = logging.getLogger(__name__)

MAX_FIRINGS = 200
MAX_AUTOMATIONS = 100
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_FOR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, None: 1.0}


@dataclass(slots=True)
class _Rule:
    config: AutomationConfig
    state: RuleState


def _action(value: Any, key: str, source: str) -> None:
    if value is None:
        return
    if not isinstance(value, dict) or set(value) - {"tool", "arguments"} or "tool" not in value:
        raise ConfigInvalid(
            'an action is { tool = "...", arguments = { ... } }', file=source, key=key
        )
    if not isinstance(value.get("arguments", {}), dict):
        raise ConfigInvalid("arguments: a table", file=source, key=f"{key}.arguments")


def validate_automations(
    entries: Sequence[AutomationConfig], source: str = "config.toml"
) -> list[tuple[AutomationConfig, RuleState]]:
    """Parse each rule's conditions and check its actions.

    Raises:
        ConfigInvalid: Naming ``automations[i].<key>`` and what to write.
    """
    if len(entries) > MAX_AUTOMATIONS:
        raise ConfigInvalid(
            f"at most {MAX_AUTOMATIONS} automations", file=source, key="automations"
        )
    out = []
    names: set[str] = set()
    for i, a in enumerate(entries):
        key = f"automations[{i}]"
        if not _NAME.match(a.name) or a.name in names:
            raise ConfigInvalid(
                f"{a.name[:40]!r}: a unique name of letters, digits, _ and - (up to 64)",
                file=source,
                key=f"{key}.name",
            )
        names.add(a.name)
        conditions: dict[str, Condition | None] = {}
        for field in ("when", "until"):
            text = getattr(a, field)
            try:
                conditions[field] = None if text is None else parse_condition(text)
            except ExpressionInvalid as exc:
                raise ConfigInvalid(
                    f"{a.name!r}: {exc}", file=source, key=f"{key}.{field}"
                ) from None
        m = _FOR.match(str(a.for_))
        if m is None or isinstance(a.for_, bool):
            raise ConfigInvalid(
                f"{a.name!r}: write a duration such as '2m', '30s'", file=source, key=f"{key}.for"
            )
        for_s = float(m.group(1)) * _SECONDS[m.group(2)]
        if for_s > 86400:
            raise ConfigInvalid(f"{a.name!r}: at most a day", file=source, key=f"{key}.for")
        if not a.do:
            raise ConfigInvalid(
                f"{a.name!r}: give do = {{ tool = ... }}", file=source, key=f"{key}.do"
            )
        _action(a.do, f"{key}.do", source)
        _action(a.then, f"{key}.then", source)
        when = conditions["when"]
        assert when is not None
        out.append((a, RuleState(when, for_s, conditions["until"])))
    return out


class Automations:
    """Runs the rules on readings; actions through the agent's hook pipeline.

    Args:
        agent: The service's agent (its registry, hooks, validator, observer).
        rules: From :func:`validate_automations`.
        clock: Unix seconds.
        publish: Receives ``{"type": "automation", ...}`` frames for rules with ``notify``.
    """

    def __init__(
        self,
        agent: Any,
        rules: Sequence[tuple[AutomationConfig, RuleState]],
        *,
        clock: Callable[[], float] = time.time,
        publish: Callable[[dict[str, Any]], object] | None = None,
    ) -> None:
        self.agent = agent
        self.rules = [_Rule(c, s) for c, s in rules]
        self.clock = clock
        self.publish = publish
        self.values: dict[str, float] = {}
        self.paused: str | None = None
        self.firings: deque[dict[str, Any]] = deque(maxlen=MAX_FIRINGS)
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # --- inputs ---------------------------------------------------------------------------

    def observe(self, reading: Any) -> None:
        """A state-feed listener: keep the reading's values and wake the loop."""
        if isinstance(reading, SensorReading) and reading.ok:
            for q, v in reading.values.items():
                self.values[f"{reading.sensor}.{q}"] = float(v)
            self._wake.set()

    async def evaluate(self, now: float | None = None) -> list[dict[str, Any]]:
        """Update every rule at ``now`` and run the actions of those that fired or reset;
        returns their records. Nothing runs while paused.

        Not safe to cancel halfway (a cancelled action may already have switched a device).
        """
        now = self.clock() if now is None else now
        async with self._lock:
            if self.paused is not None:
                return []
            done = []
            for rule in self.rules:
                event = rule.state.update(now, self.values.get)
                if event is None:
                    continue
                action = rule.config.do if event == "fire" else rule.config.then
                done.append(await self._act(rule, event, action, now))
            return done

    def deadline(self) -> float | None:
        """When a held condition will have lasted its ``for``."""
        times = [t for r in self.rules if (t := r.state.deadline()) is not None]
        return min(times) if times else None

    # --- pause ----------------------------------------------------------------------------

    def pause(self, why: str) -> None:
        """Stop acting (the emergency stop); what was held is forgotten."""
        self.paused = why
        for rule in self.rules:
            rule.state.reset()

    def resume(self) -> bool:
        """Act again; returns whether it was paused."""
        was, self.paused = self.paused is not None, None
        self._wake.set()
        return was

    # --- actions --------------------------------------------------------------------------

    async def _act(
        self, rule: _Rule, event: str, action: dict[str, Any] | None, now: float
    ) -> dict[str, Any]:
        record: dict[str, Any] = {"automation": rule.config.name, "event": event, "at": now}
        if action is not None:
            record["tool"] = action["tool"]
            ok, text = await self._call(
                rule, str(action["tool"]), dict(action.get("arguments", {}))
            )
            record["ok"], record["output" if ok else "error"] = ok, text[:500]
        else:
            record["ok"] = True
        self.firings.append(record)
        log.info("automation %s %s: %s", rule.config.name, event, record)
        if rule.config.notify and self.publish is not None:
            self.publish({"type": "automation", **record})
        return record

    async def _call(self, rule: _Rule, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        from clawseed_edge.agent.tool_run import run_tool_call

        agent = self.agent
        context = ToolContext(session_id=f"automation-{rule.config.name}", channel="automations")
        call = ToolCall(name, arguments, id=f"auto_{int(self.clock() * 1000)}")
        _, result = await run_tool_call(
            call,
            context,
            registry=agent.registry,
            hooks=agent.hooks,
            validator=agent.schema_validator,
            timeout_s=agent.tool_timeout_s,
            max_output_chars=agent.max_tool_output_chars,
            emit=lambda event: None,
            record=agent.observer.record,
            scrub=agent.scrub,
        )
        return result.success, (result.output if result.success else result.error or "failed")

    # --- loop -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Evaluate on each reading and when a ``for`` runs out, until cancelled."""
        while True:
            deadline = self.deadline()
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                async with asyncio.timeout(timeout):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.evaluate()
            except Exception:
                log.exception("evaluating the automations failed")

    def start(self) -> None:
        if self._task is None and self.rules:
            self._task = asyncio.create_task(self.run(), name="automations")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
