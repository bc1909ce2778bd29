"""What a job is and what running one does: an agent prompt, a direct tool call, a shell command.

Every action goes through the agent's own tool path (:func:`~clawseed_edge.agent.tool_run.
call_tool`, with the job as its actor: bounds, schema check, the hook pipeline with the
SecurityPolicy first, the tool's timeout, scrubbing, the audit line), or is a turn of the agent: a scheduled switch meets the same autonomy level,
approval, device limits and rate limits as a switch asked for in a chat.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from clawseed_edge.api import Actor, ClawseedError, MemoryEntry, ToolContext
from clawseed_edge.config.jobs import (
    JOB_NAME,
    MAX_ARGUMENTS_CHARS,
    MAX_PROMPT_CHARS,
    MAX_SHELL_CHARS,
    JobSettings,
)

from .schedule import Schedule

if TYPE_CHECKING:
    from clawseed_edge.agent import Agent

__all__ = ["DELIVERIES", "ActionKind", "Job", "JobExecutor", "JobFailed", "job_from_settings"]

log = logging.getLogger("clawseed_edge.scheduler")

ActionKind = Literal["prompt", "tool", "shell"]
DELIVERIES = ("log", "memory", "phones")
#: The most characters of a job's output kept in its run record and delivered.
MAX_OUTPUT_CHARS = 4000


class JobFailed(ClawseedError, RuntimeError):
    """A job's action failed (a refused or failed tool call, a failed turn); recorded as failed."""

    code = "job_failed"


@dataclass(frozen=True, slots=True)
class Job:
    """One scheduled job.

    Attributes:
        name: Unique key (letters, digits, ``_``, ``-``).
        schedule: When it runs.
        kind: ``prompt``, ``tool`` or ``shell``.
        action: ``{"prompt": ...}``, ``{"tool": ..., "arguments": {...}}`` or ``{"shell": ...}``.
        deliver: Where the answer goes: ``log``, ``memory``, ``phones``.
        missed: After downtime: ``skip`` or ``run_once``.
        enabled: Whether it runs.
        origin: ``config`` (synced from ``[[jobs]]``), ``cli`` or ``agent``.
        created_at: Unix seconds; an interval job's runs count from here.
        next_run: Unix seconds of the next run, or None (a one-off that ran, a disabled job).
        last_run: Unix seconds of the last start, or None.
    """

    name: str
    schedule: Schedule
    kind: ActionKind
    action: Mapping[str, Any]
    deliver: tuple[str, ...] = ("log",)
    missed: Literal["skip", "run_once"] = "skip"
    enabled: bool = True
    origin: str = "cli"
    created_at: float = 0.0
    next_run: float | None = None
    last_run: float | None = None

    @classmethod
    def build(
        cls,
        name: str,
        schedule: Schedule,
        *,
        prompt: str | None = None,
        tool: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        shell: str | None = None,
        deliver: tuple[str, ...] | list[str] = ("log",),
        missed: str = "skip",
        origin: str = "cli",
        created_at: float = 0.0,
        enabled: bool = True,
    ) -> Job:
        """A checked job. Raises ValueError naming the field and what to write."""
        if not JOB_NAME.match(name):
            raise ValueError(
                f"name: {name[:70]!r} is not a job name; use letters, digits, '_' and '-' "
                "(at most 64)"
            )
        given = [k for k, v in (("prompt", prompt), ("tool", tool), ("shell", shell)) if v]
        if len(given) != 1:
            raise ValueError(
                f"action: give exactly one of prompt, tool or shell (got {', '.join(given) or 'none'})"
            )
        kind: ActionKind = given[0]  # type: ignore[assignment]
        action: dict[str, Any]
        if prompt:
            if len(prompt) > MAX_PROMPT_CHARS:
                raise ValueError(f"prompt: longer than {MAX_PROMPT_CHARS} characters")
            action = {"prompt": prompt}
        elif tool:
            args = dict(arguments or {})
            if len(json.dumps(args)) > MAX_ARGUMENTS_CHARS:
                raise ValueError(f"arguments: more than {MAX_ARGUMENTS_CHARS} characters as JSON")
            action = {"tool": tool, "arguments": args}
        else:
            assert shell is not None
            if len(shell) > MAX_SHELL_CHARS:
                raise ValueError(f"shell: longer than {MAX_SHELL_CHARS} characters")
            action = {"shell": shell.strip()}
        places = tuple(dict.fromkeys(deliver))
        bad = [p for p in places if p not in DELIVERIES]
        if bad or not places:
            raise ValueError(
                f"deliver: {bad or 'nothing'} is not a place; use any of {', '.join(DELIVERIES)}"
            )
        if missed not in ("skip", "run_once"):
            raise ValueError(f"missed: {missed!r} is not a policy; use 'skip' or 'run_once'")
        return cls(
            name=name,
            schedule=schedule,
            kind=kind,
            action=action,
            deliver=places,
            missed=missed,  # type: ignore[arg-type]
            enabled=enabled,
            origin=origin,
            created_at=created_at,
        )

    def summary(self) -> str:
        """The action in a few words: ``ask "..."``, ``call sensor_read``, ``run `uptime```."""
        if self.kind == "prompt":
            text = str(self.action["prompt"])
            return f'ask "{text[:60]}{"..." if len(text) > 60 else ""}"'
        if self.kind == "tool":
            args = json.dumps(self.action.get("arguments", {}), sort_keys=True)
            return f"call {self.action['tool']} {args[:80]}"
        return f"run `{str(self.action['shell'])[:80]}`"


def job_from_settings(settings: JobSettings, created_at: float) -> Job:
    """The Job a ``[[jobs]]`` table declares (already checked by the loader)."""
    if settings.cron is not None:
        schedule = Schedule.parse("cron", settings.cron)
    elif settings.every is not None:
        schedule = Schedule.parse("every", settings.every)
    else:
        schedule = Schedule.parse("at", str(settings.at))
    return Job.build(
        settings.name,
        schedule,
        prompt=settings.prompt,
        tool=settings.tool,
        arguments=settings.arguments,
        shell=settings.shell,
        deliver=list(settings.deliver),
        missed=settings.missed,
        origin="config",
        created_at=created_at,
        enabled=settings.enabled,
    )


class JobExecutor:
    """Runs a job's action with the service's agent and delivers what it produced.

    Args:
        agent: The service's agent: its registry, hooks (SecurityPolicy first), tool timeout and
            scrubber are used for tool and shell jobs; prompt jobs run a turn on it.
        publish: Sends a frame to connected phones (the gateway's event stream), or None when
            there is no gateway: ``phones`` deliveries then go to the log, saying so.
        clock: Unix seconds (memory entries' keys).
    """

    def __init__(
        self,
        agent: Agent,
        *,
        publish: Callable[[dict[str, Any]], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.agent = agent
        self.publish = publish
        self.clock = clock

    async def run(self, job: Job) -> str:
        """Run the job once and deliver its output; returns the output.

        Raises:
            JobFailed: The call was refused or failed, or the turn failed (the message says why).

        Cancel-safe as a turn is: a cancelled tool call may already have switched a device.
        """
        context = ToolContext(
            session_id=f"job-{job.name}",
            channel="scheduler",
            actor=Actor("schedule", "scheduler", job.name),
        )
        if job.kind == "prompt":
            output = await self._prompt(job, context)
        elif job.kind == "tool":
            output = await self._call(
                str(job.action["tool"]), dict(job.action.get("arguments", {})), context
            )
        else:
            output = await self._call("shell", {"command": job.action["shell"]}, context)
        output = output[:MAX_OUTPUT_CHARS]
        await self.deliver(job, output)
        return output

    async def _prompt(self, job: Job, context: ToolContext) -> str:
        try:
            return await self.agent.run(
                str(job.action["prompt"]), session_id=context.session_id, context=context
            )
        except ClawseedError as exc:
            raise JobFailed(f"the turn failed: {exc}") from exc

    async def _call(self, name: str, arguments: dict[str, Any], context: ToolContext) -> str:
        from clawseed_edge.agent.tool_run import call_tool

        agent = self.agent
        if agent.registry.get(name) is None:
            hint = " (turn on [tools] shell)" if name == "shell" else ""
            raise JobFailed(f"no tool {name!r} is registered{hint}; the job cannot run")
        result = await call_tool(agent, name, arguments, context)
        if not result.success:
            raise JobFailed(result.error or f"{name} failed")
        return result.output

    async def deliver(self, job: Job, output: str) -> None:
        """Send ``output`` to each of the job's places; a failed place is logged, not raised."""
        for place in job.deliver:
            try:
                if place == "memory":
                    await self._to_memory(job, output)
                elif place == "phones" and self.publish is not None:
                    self.publish(
                        {"type": "job_result", "job": job.name, "text": output, "at": self.clock()}
                    )
                elif place == "phones":
                    log.info("job %s (no gateway to reach phones): %s", job.name, output)
                else:
                    log.info("job %s: %s", job.name, output)
            except Exception:
                log.exception("job %s: delivering to %s failed", job.name, place)

    async def _to_memory(self, job: Job, output: str) -> None:
        memory = self.agent.memory
        if memory is None:
            log.warning("job %s: memory is off; its result goes to the log: %s", job.name, output)
            return
        now = self.clock()
        await memory.store(
            MemoryEntry(
                key=f"job:{job.name}:{int(now)}",
                content=f"{job.summary()} -> {output}",
                category="daily",
                session_id=f"job-{job.name}",
                metadata={"job": job.name, "at": now},
            )
        )
