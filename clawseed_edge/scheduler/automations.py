"""``[[automations]]`` and the rules created by chat or the CLI: rules on sensor readings and
input events that act without the model.

::

    [[automations]]
    name = "too_hot"
    when = "greenhouse.temperature > 30"
    for = "2m"
    do = { tool = "gpio_switch", arguments = { device = "fan", on = true } }
    until = "greenhouse.temperature < 28"
    then = { tool = "gpio_switch", arguments = { device = "fan", on = false } }
    notify = ["phones", "telegram"]

The runner (:class:`Automations`) takes the sampler's filtered readings and the wired devices'
states, keeps the latest value of each ``SENSOR.QUANTITY`` and ``DEVICE.WORD``, and runs each
rule's :class:`~.rules.RuleState`. A tool action is a call through the agent's hook pipeline, the
SecurityPolicy first (so an approval device asks, read_only refuses, rate limits count), exactly
as a scheduled job's; a prompt is a turn of the agent in the rule's own session; a message and
``notify`` go out through ``publish`` (the service's notifications). Every firing is recorded
(in state.db when a store is given; the last :data:`MAX_FIRINGS` in memory too).

Each rule's actions run beside the loop, one at a time per rule: a call waiting for an approval
never holds back another rule. The emergency stop (:meth:`Automations.pause`) cancels the
calls and turns in flight and forgets what was held; until a person's reset
(:meth:`Automations.resume`) the rules still follow their readings, and a firing is recorded as
refused (``estop_latched``) without running its action, so the reset restarts nothing.

A sensor whose reading failed (or went stale: the sampler says so) is unknown: its values are
NaN, no comparison on them holds, and an active rule runs its ``then`` after its grace period
(``on_unknown``, see :mod:`.rules`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import (
    Actor,
    ClawseedError,
    DeviceState,
    SensorReading,
    ToolContext,
)
from clawseed_edge.config.automations import AutomationConfig

from .automation_spec import (
    CheckTool,
    device_values,
    validate_automation,
    validate_automations,
)
from .rules import RuleState

if TYPE_CHECKING:
    from .automation_store import AutomationStore

__all__ = ["MAX_FIRINGS", "AutomationConfig", "Automations", "validate_automations"]

log = logging.getLogger(__name__)

MAX_FIRINGS = 200
#: The longest a prompt action's turn may take before it is recorded as failed.
PROMPT_TIMEOUT_S = 300.0
_NOTE_CHARS = 500


@dataclass(slots=True)
class _Rule:
    config: AutomationConfig
    state: RuleState
    origin: str = "config"


def _held_by(config: AutomationConfig) -> tuple[Any, ...]:
    """What a rule's state depends on: a change elsewhere keeps what it holds."""
    return (config.when, config.until, config.for_, config.on_unknown, config.unknown_grace)


def _kind(action: Mapping[str, Any] | None) -> str:
    if not action:
        return "none"
    return next((k for k in ("tool", "prompt", "message") if k in action), "none")


class Automations:
    """Runs the rules on readings and input events; actions through the agent.

    Args:
        agent: The service's agent (its registry, hooks, validator, observer; ``run`` for
            prompt actions).
        rules: From :func:`validate_automations` (used as they are when no store is given).
        store: The rules and firings in state.db; :meth:`load` reads the rules from it.
        clock: Unix seconds.
        publish: Receives ``{"type": "notification", "to": [...], ...}`` frames (a rule's
            ``notify``, its messages, its prompt answers).
        known: Sensor/device names and what each publishes (checks rules that are added).
    """

    def __init__(
        self,
        agent: Any,
        rules: Sequence[tuple[AutomationConfig, RuleState]] = (),
        *,
        store: AutomationStore | None = None,
        clock: Callable[[], float] = time.time,
        publish: Callable[[dict[str, Any]], object] | None = None,
        known: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.agent = agent
        self.rules = [_Rule(c, s) for c, s in rules]
        self.store = store
        self.clock = clock
        self.publish = publish
        self.known = known
        self.values: dict[str, float] = {}
        self.paused: str | None = None
        #: The stable code a firing refused while paused carries (``estop_latched``).
        self.paused_code: str | None = None
        self.firings: deque[dict[str, Any]] = deque(maxlen=MAX_FIRINGS)
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._turns: dict[str, asyncio.Task[None]] = {}
        #: Each rule's tool call in flight (one per rule; cancelled by the emergency stop).
        self._calls: dict[str, asyncio.Task[dict[str, Any]]] = {}
        self._record_lock = asyncio.Lock()

    # --- rules ----------------------------------------------------------------------------

    def check_tool(self) -> CheckTool:
        """What refuses a tool action the agent could never run (for the add paths)."""
        from .tools import check_tool_job

        return lambda name, arguments: check_tool_job(self.agent, name, arguments)

    async def load(self) -> list[str]:
        """Take the rules from the store; a rule whose ``when``, ``until`` and ``for`` did not
        change keeps what it holds (an add or remove elsewhere does not reset it). A stored rule
        that no longer checks (a sensor gone from the config) is skipped and logged; returns
        the names skipped."""
        if self.store is None:
            return []
        stored = await self.store.list()
        old = {r.config.name: r for r in self.rules}
        rules, skipped = [], []
        for entry in stored:
            try:
                state = validate_automation(entry.config, known=self.known)
            except ClawseedError as exc:
                log.warning("automation %s is skipped: %s", entry.config.name, exc)
                skipped.append(entry.config.name)
                continue
            prev = old.get(entry.config.name)
            if prev is not None and _held_by(prev.config) == _held_by(entry.config):
                state = prev.state
            rules.append(_Rule(entry.config, state, entry.origin))
        async with self._lock:
            self.rules = rules
        self._wake.set()
        return skipped

    async def automations_changed(self) -> str | None:
        """The tools' hook after an add or remove: read the rules again (no note)."""
        await self.load()
        return None

    # --- inputs ---------------------------------------------------------------------------

    def observe(self, update: Any) -> None:
        """A state-feed listener: keep a reading's values or a device's state, wake the loop."""
        if isinstance(update, SensorReading):
            if not update.ok:
                # Failed or stale: what this sensor gave is unknown now (NaN holds nothing).
                prefix = f"{update.sensor}."
                for key in [k for k in self.values if k.startswith(prefix)]:
                    self.values[key] = float("nan")
                self._wake.set()
                return
            for q, v in update.values.items():
                self.values[f"{update.sensor}.{q}"] = float(v)
        elif isinstance(update, DeviceState):
            self.values.update(device_values(update.device, update.kind, update.value))
        else:
            return
        self._wake.set()

    async def evaluate(
        self, now: float | None = None, *, wait: bool = True
    ) -> list[dict[str, Any]]:
        """Update every rule at ``now`` and start the actions of those that fired or reset;
        returns their records. While paused no action runs: a firing is recorded as refused.

        ``wait`` False (the loop): tool calls run on and record their firings when they end,
        so one waiting for an approval holds back no other rule; the records returned for
        them then say ``running``.

        Not safe to cancel halfway (a cancelled action may already have switched a device).
        """
        now = self.clock() if now is None else now
        async with self._lock:
            started: list[dict[str, Any] | asyncio.Task[dict[str, Any]]] = []
            for rule in self.rules:
                event = rule.state.update(now, self.values.get)
                if event is None:
                    continue
                action = rule.config.do if event == "fire" else rule.config.then
                if self.paused is not None:
                    started.append(await self._refused(rule, event, action or None, now))
                else:
                    started.append(await self._act(rule, event, action or None, now))
        if not wait:
            return [_running(s) if isinstance(s, asyncio.Task) else s for s in started]
        return [await s if isinstance(s, asyncio.Task) else s for s in started]

    def deadline(self) -> float | None:
        """When a held condition will have lasted its ``for``."""
        times = [t for r in self.rules if (t := r.state.deadline()) is not None]
        return min(times) if times else None

    # --- pause ----------------------------------------------------------------------------

    def pause(self, why: str, code: str | None = None) -> None:
        """Stop acting (the emergency stop): the calls and turns in flight are cancelled, what
        was held is forgotten; firings until :meth:`resume` are recorded as refused, ``code``
        (``estop_latched``) on each."""
        self.paused, self.paused_code = why, code
        for rule in self.rules:
            rule.state.reset()
        for task in [*self._turns.values(), *self._calls.values()]:
            task.cancel()  # a call or a turn may be about to switch something

    def resume(self) -> bool:
        """Act again; returns whether it was paused. Runs nothing by itself: a rule that fired
        while paused acts again only after it has reset."""
        was, self.paused, self.paused_code = self.paused is not None, None, None
        self._wake.set()
        return was

    # --- actions --------------------------------------------------------------------------

    async def _act(
        self, rule: _Rule, event: str, action: dict[str, Any] | None, now: float
    ) -> dict[str, Any] | asyncio.Task[dict[str, Any]]:
        kind = _kind(action)
        record: dict[str, Any] = {
            "automation": rule.config.name,
            "event": event,
            "at": now,
            "action": kind,
        }
        if event == "reset" and rule.state.reset_by == "unknown":
            record["unknown"] = True  # the safe side, for a value that went unknown
        ok, text = True, ""
        if action is not None and kind == "tool":
            record["tool"] = action["tool"]
            return self._start_call(rule, record, str(action["tool"]), dict(action["arguments"]))
        elif action is not None and kind == "prompt":
            return self._start_turn(rule, record, str(action["prompt"]))
        elif action is not None and kind == "message":
            text = str(action["message"])
        return await self._finish(rule, record, ok, text)

    async def _finish(
        self, rule: _Rule, record: dict[str, Any], ok: bool, text: str
    ) -> dict[str, Any]:
        """Record a firing's outcome (memory, state.db) and announce it."""
        name, kind = rule.config.name, record["action"]
        record["ok"], record["output" if ok else "error"] = ok, text[:_NOTE_CHARS]
        self.firings.append(record)
        log.info("automation %s %s: %s", name, record["event"], record)
        if self.store is not None:
            label = f"tool {record['tool']}" if "tool" in record else kind
            try:
                # One writer at a time on the shared connection (a turn ends outside the lock).
                async with self._record_lock:
                    await self.store.record(name, record["at"], record["event"], label, ok, text)
            except ClawseedError:
                log.exception("automation %s: recording the firing failed", name)
        self._announce(rule, record, kind, text)
        return record

    async def _refused(
        self, rule: _Rule, event: str, action: dict[str, Any] | None, now: float
    ) -> dict[str, Any]:
        """A firing while paused: recorded (with the pause's code), its action not run."""
        record: dict[str, Any] = {
            "automation": rule.config.name,
            "event": event,
            "at": now,
            "action": _kind(action),
        }
        if action is not None and "tool" in action:
            record["tool"] = action["tool"]
        if self.paused_code is not None:
            record["code"] = self.paused_code
        code = f" [{self.paused_code}]" if self.paused_code else ""
        return await self._finish(rule, record, False, f"not run: {self.paused}{code}")

    def _start_call(
        self, rule: _Rule, record: dict[str, Any], name: str, arguments: dict[str, Any]
    ) -> asyncio.Task[dict[str, Any]] | dict[str, Any]:
        """A tool action runs beside the loop (an approval may take minutes); one per rule."""
        running = self._calls.get(rule.config.name)
        if running is not None and not running.done():
            record.update(ok=False, error="the rule's previous call still runs; skipped")
            self.firings.append(record)
            return record
        task = asyncio.create_task(
            self._call_and_finish(rule, record, name, arguments),
            name=f"automation-call-{rule.config.name}",
        )
        self._calls[rule.config.name] = task
        return task

    async def _call_and_finish(
        self, rule: _Rule, record: dict[str, Any], name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        try:
            ok, text, code, photo = await self._call(rule, name, arguments)
        except asyncio.CancelledError:
            # The emergency stop (or the service's stop) cancelled it: recorded, not run on.
            why = self.paused or "the service stopped"
            if self.paused_code:
                record["code"] = self.paused_code
            await asyncio.shield(self._finish(rule, record, False, f"cancelled: {why}"))
            raise
        if code is not None:
            record["code"] = code
        if photo:
            record["photo"] = photo  # a snapshot's file: the notification attaches it
        return await self._finish(rule, record, ok, text)

    def _start_turn(self, rule: _Rule, record: dict[str, Any], prompt: str) -> dict[str, Any]:
        """A prompt runs beside the loop: a slow model must not hold back the other rules (a
        frost rule's heater). One turn per rule at a time; its firing is recorded when it ends
        (:meth:`drain` waits for them)."""
        name = rule.config.name
        running = self._turns.get(name)
        if running is not None and not running.done():
            record.update(ok=False, error="the rule's previous turn still runs; skipped")
            self.firings.append(record)
            return record
        task = asyncio.create_task(self._turn(rule, record, prompt), name=f"automation-{name}")
        self._turns[name] = task
        return {**record, "ok": True, "output": f"a turn runs in session automation-{name}"}

    async def _turn(self, rule: _Rule, record: dict[str, Any], prompt: str) -> None:
        try:
            ok, text = await self._prompt(rule, prompt)
        except asyncio.CancelledError:
            why = self.paused or "the service stopped"
            await self._finish(rule, record, False, f"the turn was stopped: {why}")
            raise
        await self._finish(rule, record, ok, text)

    async def drain(self) -> None:
        """Wait for the actions' turns and calls that run (each records its firing as it ends)."""
        await asyncio.gather(*self._turns.values(), *self._calls.values(), return_exceptions=True)

    def _announce(self, rule: _Rule, record: dict[str, Any], kind: str, text: str) -> None:
        places = list(rule.config.notify) or (["phones"] if kind == "message" else [])
        if not places or self.publish is None:
            return
        if kind == "message" and record["ok"]:
            body = text
        else:
            outcome = text if record["ok"] else f"refused or failed: {text}"
            verb = "fired" if record["event"] == "fire" else "reset"
            body = f"Automation {rule.config.name} {verb}" + (f": {outcome}" if outcome else ".")
        self.publish(
            {
                "type": "notification",
                "to": places,
                "text": body[:_NOTE_CHARS],
                **{k: v for k, v in record.items() if k not in ("output", "error")},
            }
        )

    def _context(self, rule: _Rule) -> ToolContext:
        return ToolContext(
            session_id=f"automation-{rule.config.name}",
            channel="automations",
            actor=Actor("automation", "automations", rule.config.name),
        )

    async def _prompt(self, rule: _Rule, prompt: str) -> tuple[bool, str]:
        """A turn of the agent in the rule's own session (its tools pass the policy)."""
        context = self._context(rule)
        try:
            async with asyncio.timeout(PROMPT_TIMEOUT_S):
                answer = await self.agent.run(
                    prompt, session_id=context.session_id, context=context
                )
        except TimeoutError:
            return False, f"the turn took longer than {PROMPT_TIMEOUT_S:g} s"
        except ClawseedError as exc:
            return False, f"the turn failed: {exc}"
        return True, str(answer)

    async def _call(
        self, rule: _Rule, name: str, arguments: dict[str, Any]
    ) -> tuple[bool, str, str | None, str | None]:
        """(ok, text, the result's code, the path of a picture the tool stored or None)."""
        from clawseed_edge.agent.tool_run import call_tool

        agent = self.agent
        if agent.registry.get(name) is None:
            return False, f"no tool {name!r} is registered", None, None
        result = await call_tool(agent, name, arguments, self._context(rule))
        text = result.output if result.success else result.error or "failed"
        photo = None
        if result.success and result.images and isinstance(result.data, dict):
            photo = str(result.data.get("path") or "") or None
        return result.success, text, result.code, photo

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
                await self.evaluate(wait=False)
            except Exception:
                log.exception("evaluating the automations failed")

    def start(self) -> None:
        """Run :meth:`run` in a task (rules may arrive later, by chat or the CLI)."""
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="automations")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        tasks = [t for t in (task, *self._turns.values(), *self._calls.values()) if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _running(task: asyncio.Task[dict[str, Any]]) -> dict[str, Any]:
    """What :meth:`Automations.evaluate` returns for a call still running."""
    if task.done() and not task.cancelled():
        return task.result()
    return {"automation": task.get_name().removeprefix("automation-call-"), "running": True}
