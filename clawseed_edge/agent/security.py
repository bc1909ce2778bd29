"""SecurityPolicy: the hook that runs first on every tool call.

It decides by, in order: the tool's risk class and the autonomy level; the device action the
call would perform (allowed flag, a finite value within range, read-only); the files and command
it would touch (no NUL bytes; forbidden paths after resolving symlinks, including bare shell
words that name an existing file; shell command allowlist); the per-session action rate and the
per-device switch rate; and finally, for act/dangerous calls in ``supervised`` autonomy (except
tools matching ``auto_approve``) or devices configured with ``approval = true`` (always), a
human's approval through the Approver. Once a tool with ``external_content`` (web_fetch,
http_request, a client's remote tool) ran in a turn, ``auto_approve`` no longer applies in that
turn: text from outside may be what asks for the memory write.

First of all, while the emergency stop's latch holds (:mod:`.latch_check`), every call that is
not a read, and an approval still pending when it latches, is refused (``estop_latched``).
A refusal is a ``cancel`` decision whose reason the model reads as the call's failed result,
never an exception. Every decision is recorded as a ``PolicyDecision`` observer event.
"""

from __future__ import annotations

import asyncio
import enum
import fnmatch
import logging
import math
import os
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from clawseed_edge.api import (
    ESTOP_LATCHED,
    ActionLedger,
    ApprovalRequest,
    Approver,
    DeviceAction,
    EstopLatch,
    HookDecision,
    Observer,
    PolicyDecision,
    ResourceAccess,
    RiskClass,
    Tool,
    ToolCall,
    ToolContext,
    ToolResult,
)

from .access import ForbiddenPaths, check_command, recursive
from .action_ledger import DeviceRates, MemoryActionLedger
from .approval import announce_approval_request, refusal_text
from .latch_check import approval_or_estop, latch_refusal

__all__ = [
    "DEFAULT_ALLOWED_COMMANDS",
    "DEFAULT_AUTO_APPROVE",
    "DEFAULT_FORBIDDEN_PATHS",
    "Autonomy",
    "SecurityPolicy",
    "check_command",
]

log = logging.getLogger(__name__)


class Autonomy(enum.StrEnum):
    """How much the agent may do on its own."""

    READ_ONLY = "read_only"
    SUPERVISED = "supervised"
    FULL = "full"


DEFAULT_ALLOWED_COMMANDS: tuple[str, ...] = (
    "ls", "cat", "head", "tail", "wc", "grep", "echo", "pwd", "date", "uname", "uptime",
    "df", "du", "free", "whoami", "hostname", "vcgencmd", "i2cdetect", "pinctrl",
)  # fmt: skip

DEFAULT_FORBIDDEN_PATHS: tuple[str, ...] = (
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh",
    "/root/.ssh", "~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gcloud", "/proc/kcore",
    "/boot/config.txt", "/boot/firmware/config.txt",
)  # fmt: skip

#: How many turns that read outside content are remembered (a turn lasts seconds to minutes).
_MAX_EXTERNAL_TURNS = 1024

#: Tools that run without approval in ``supervised`` autonomy: writing the agent's own memory
#: must not need a human, or a headless device cannot remember anything.
DEFAULT_AUTO_APPROVE: tuple[str, ...] = ("memory_store",)


class _Denied(Exception):
    def __init__(
        self,
        reason: str,
        decision: Literal["denied", "refused"] = "denied",
        code: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.decision = decision
        self.code = code


class SecurityPolicy:
    """The first hook of every tool call; see the module docstring for what it checks.

    Args:
        autonomy: ``read_only``, ``supervised`` or ``full``.
        approver: Who approves act/dangerous calls in ``supervised`` (and devices that require
            approval in any autonomy). None: such calls are refused with a reason.
        allowed_commands: Shell commands whose first word may run (``"*"``: any).
        forbidden_paths: Paths (and everything under them) no tool may touch; ``~`` expands.
        workspace_dir: Base for relative paths in ``describe_access``.
        max_actions_per_hour: Per-session limit on act/dangerous calls (None: no limit).
        approval_timeout_s: Seconds to wait for an approver; a timeout is a refusal.
        auto_approve: Glob patterns (``fnmatch``, like the tools filter) of tools that need no
            approval in ``supervised`` autonomy. They never lift ``read_only``, and a device
            configured with ``approval = true`` still asks.
        observer: Receives a ``PolicyDecision`` for every decision.
        clock: Seconds (tests pass a fake); Unix time (``time.time``) when ``ledger`` is
            shared between processes, since their times are compared.
        ledger: Where device writes are charged against ``max_per_minute``: in memory (this
            process) by default; a persistent ledger makes the limits hold across processes.
        latch: The process's emergency-stop latch; while it holds, every call that is not a
            read is refused (``estop_latched``). None: no latch (a one-shot CLI).
    """

    name = "security_policy"

    def __init__(
        self,
        *,
        autonomy: Autonomy | str = Autonomy.SUPERVISED,
        approver: Approver | None = None,
        allowed_commands: Iterable[str] = DEFAULT_ALLOWED_COMMANDS,
        forbidden_paths: Iterable[str] = DEFAULT_FORBIDDEN_PATHS,
        workspace_dir: str | os.PathLike[str] | None = None,
        max_actions_per_hour: int | None = 120,
        approval_timeout_s: float = 120.0,
        auto_approve: Iterable[str] = DEFAULT_AUTO_APPROVE,
        observer: Observer | None = None,
        clock: Callable[[], float] = time.monotonic,
        ledger: ActionLedger | None = None,
        latch: EstopLatch | None = None,
    ) -> None:
        self.latch = latch  # the service's; see the module docstring
        try:
            self.autonomy = Autonomy(autonomy)
        except ValueError:
            raise ValueError(
                f"unknown autonomy {autonomy!r}; use one of: read_only, supervised, full"
            ) from None
        self.approver = approver
        self.allowed_commands = frozenset(allowed_commands)
        self.forbidden_paths = tuple(forbidden_paths)
        self._forbidden = ForbiddenPaths(self.forbidden_paths)
        self.workspace_dir = Path(workspace_dir) if workspace_dir is not None else None
        self.max_actions_per_hour = max_actions_per_hour
        self.approval_timeout_s = approval_timeout_s
        self.auto_approve = tuple(auto_approve)
        for pattern in self.auto_approve:
            if not isinstance(pattern, str) or not pattern.strip():
                raise ValueError(
                    f"auto_approve pattern {pattern!r} is not a tool name or glob; use names "
                    "such as 'memory_store' or 'memory_*'"
                )
        self.observer = observer
        self._clock = clock
        self._session_actions: dict[str, deque[float]] = {}
        self.ledger: ActionLedger = ledger if ledger is not None else MemoryActionLedger()
        self._device_rates = DeviceRates(self.ledger)
        # (session, turn) -> the outside tool that ran in it; see _needs_approval.
        self._external_turns: OrderedDict[tuple[str, str], str] = OrderedDict()

    # --- Hook ----------------------------------------------------------------------------

    async def before_tool(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        """Decide on a call; may wait for an approver (cancel-safe)."""
        return await self._decide(call, tool, context, count=True)

    async def recheck(
        self, call: ToolCall, tool: Tool | None, context: ToolContext
    ) -> HookDecision:
        """Check a call modified by a later hook, without counting it against the rates again."""
        return await self._decide(call, tool, context, count=False)

    async def after_tool(self, call: ToolCall, result: ToolResult, context: ToolContext) -> None:
        return None

    # --- decision ------------------------------------------------------------------------

    async def _decide(
        self, call: ToolCall, tool: Tool | None, context: ToolContext, *, count: bool
    ) -> HookDecision:
        device: str | None = None
        try:
            if tool is None:
                raise _Denied(f"unknown tool {call.name!r}")
            action = self._describe(tool, "describe_action", call, DeviceAction)
            device = action.device if action is not None else None
            access = self._describe(tool, "describe_access", call, ResourceAccess)
            risk = self._effective_risk(tool, action)
            if (latched := latch_refusal(self.latch, call, risk, action)) is not None:
                raise _Denied(latched, "refused", ESTOP_LATCHED)
            self._check_autonomy(call, risk, action)
            if action is not None:
                self._check_action(action)
            if access is not None:
                self._check_access(access)
            now = self._clock()
            await self._check_rates(context.session_id, risk, action, now)
            needs_approval, note = self._needs_approval(call, risk, action, context)
            approved = False
            if needs_approval:
                await self._ask_approval(call, risk, action, context)
                approved = True
            if count:
                await self._count(context.session_id, risk, action, self._clock())
        except _Denied as denied:
            self._record(call, denied.decision, denied.reason, device, context)
            verb = "Refused" if denied.decision == "refused" else "Denied"
            return HookDecision.cancel(
                f"{verb} by the security policy: {denied.reason}",
                denied.code or f"policy_{denied.decision}",
            )
        if getattr(tool, "external_content", False):
            self._mark_external(context, call.name)
        self._record(call, "approved" if approved else "allowed", note, device, context)
        return HookDecision.proceed()

    def _mark_external(self, context: ToolContext, tool_name: str) -> None:
        """Remember that this turn let text from outside in (bounded: oldest turns forgotten)."""
        if not context.turn_id:
            return
        key = (context.session_id, context.turn_id)
        self._external_turns[key] = tool_name
        self._external_turns.move_to_end(key)
        while len(self._external_turns) > _MAX_EXTERNAL_TURNS:
            self._external_turns.popitem(last=False)

    def _needs_approval(
        self, call: ToolCall, risk: RiskClass, action: DeviceAction | None, context: ToolContext
    ) -> tuple[bool, str]:
        """Whether a human must approve the call, and a note for the decision record."""
        # A device configured with approval = true always asks: the DeviceAction's flag wins
        # over the autonomy level and over every auto_approve pattern.
        # A camera's picture is private: its read asks too.
        private = action is not None and action.kind == "camera"
        if (
            action is not None
            and action.requires_approval
            and (action.operation == "write" or private)
        ):
            return True, ""
        actor = context.actor
        if actor is not None and actor.is_person and self.autonomy is Autonomy.SUPERVISED:
            # Supervised guards the model: a person who pressed the switch is the approval.
            return False, f"a person's direct command ({actor})"
        if self.autonomy is not Autonomy.SUPERVISED or risk is RiskClass.READ:
            return False, ""
        # After a web page (or another outside answer) in this turn, nothing is auto-approved:
        # the page may be what asks for the memory write or the switch.
        if context.turn_id and (context.session_id, context.turn_id) in self._external_turns:
            return True, ""
        for pattern in self.auto_approve:
            if fnmatch.fnmatchcase(call.name, pattern):
                return False, f"auto-approved by [autonomy].auto_approve pattern {pattern!r}"
        return True, ""

    @staticmethod
    def _describe(tool: Tool, method: str, call: ToolCall, kind: type[Any]) -> Any:
        describe = getattr(tool, method, None)
        if describe is None:
            return None
        try:
            result = describe(call.arguments)
        except Exception as exc:
            raise _Denied(
                f"tool {call.name!r} could not describe what the call would do "
                f"({type(exc).__name__}: {exc}); check the arguments"
            ) from exc
        return result if isinstance(result, kind) else None

    @staticmethod
    def _effective_risk(tool: Tool, action: DeviceAction | None) -> RiskClass:
        if action is not None and action.operation == "read":
            return RiskClass.READ
        risk = getattr(tool, "risk", None)
        try:
            return RiskClass(risk) if risk is not None else RiskClass.DANGEROUS
        except ValueError:
            return RiskClass.DANGEROUS

    def _check_autonomy(self, call: ToolCall, risk: RiskClass, action: DeviceAction | None) -> None:
        if self.autonomy is not Autonomy.READ_ONLY or risk is RiskClass.READ:
            return
        what = f"{action.operation}s device {action.device!r}" if action else f"is {risk.value}"
        raise _Denied(
            f"{call.name!r} {what} and autonomy is read_only, which allows reading only; the "
            "user can set autonomy to 'supervised' to allow it with approval"
        )

    @staticmethod
    def _check_action(action: DeviceAction) -> None:
        label = action.summary or f"{action.operation} {action.device}"
        if not action.allowed:
            raise _Denied(
                f"device {action.device!r} ({action.kind}) does not allow {action.operation} "
                f"({label}); see the device's configuration"
            )
        value = action.value
        if action.operation == "write" and value is not None:
            # NaN compares false with every limit and inf passes a missing one: refuse
            # non-finite values here, before any approver is asked about "level nan".
            if not isinstance(value, int | float) or not math.isfinite(value):
                raise _Denied(
                    f"value {_cap(repr(value))} for device {action.device!r} is not a finite "
                    "number; send a number such as 0 or 1 (or a level within the device's range)"
                )
            if action.min_value is not None and value < action.min_value:
                raise _Denied(
                    f"value {value:g} for device {action.device!r} is below its minimum "
                    f"min_value={action.min_value:g}; use a value in range"
                )
            if action.max_value is not None and value > action.max_value:
                raise _Denied(
                    f"value {value:g} for device {action.device!r} is above its limit "
                    f"max_value={action.max_value:g}; use a value at or below it"
                )

    def _check_access(self, access: ResourceAccess) -> None:
        # No file name or argument can hold a NUL byte (the OS cuts or refuses it); say so as
        # invalid input instead of letting os.stat raise ValueError inside the policy.
        for kind, raw in [("path", p) for p in access.paths] + [("command", access.command)]:
            if isinstance(raw, str) and "\x00" in raw:
                raise _Denied(
                    f"{kind} {_cap(raw)!r} contains a NUL byte (\\x00), which no file name or "
                    f"command can contain; send the {kind} without it"
                )
        paths = list(access.paths)
        if access.command is not None:
            reason, words = check_command(access.command, self.allowed_commands)
            if reason is not None:
                raise _Denied(reason)
            shell_paths = self._forbidden.shell_paths(words, self._base_dir())
            paths.extend(shell_paths)
            walks = recursive(words) and self._forbidden.walk_refusal(shell_paths, self._base_dir())
            if walks:
                raise _Denied(walks)
        for raw in paths:
            try:
                hit = self._forbidden.hit(raw, self._base_dir())
            except (OSError, ValueError) as exc:  # e.g. a name longer than the OS allows
                raise _Denied(
                    f"path {_cap(raw)!r} is not a usable path ({exc}); send a shorter, "
                    "ordinary path"
                ) from exc
            if hit is not None:
                raise _Denied(
                    f"path {_cap(raw)!r} is inside the forbidden path {hit!r}; no tool may touch "
                    "it (the list is [autonomy].forbidden_paths in the config)"
                )

    async def _check_rates(
        self, session_id: str, risk: RiskClass, action: DeviceAction | None, now: float
    ) -> None:
        limit = self.max_actions_per_hour
        if limit is not None and risk is not RiskClass.READ:
            window = self._window(self._session_actions, session_id, now, 3600.0)
            if len(window) >= limit:
                wait = 3600.0 - (now - window[0])
                raise _Denied(
                    f"session {session_id!r} reached max_actions_per_hour={limit}; the next "
                    f"action is possible in {wait / 60:.0f} min, or the user can raise the limit"
                )
        if action is not None and action.operation == "write" and action.max_per_minute:
            reason = await self._device_rates.check(action, now)
            if reason:
                raise _Denied(reason)

    async def _count(
        self, session_id: str, risk: RiskClass, action: DeviceAction | None, now: float
    ) -> None:
        if action is not None and action.operation == "write" and action.max_per_minute:
            reason = await self._device_rates.charge(action, now)
            if reason:
                raise _Denied(reason)
        if self.max_actions_per_hour is not None and risk is not RiskClass.READ:
            self._session_actions.setdefault(session_id, deque()).append(now)

    @staticmethod
    def _window(store: dict[Any, deque[float]], key: Any, now: float, span: float) -> deque[float]:
        window = store.setdefault(key, deque())
        while window and now - window[0] >= span:
            window.popleft()
        return window

    async def _ask_approval(
        self, call: ToolCall, risk: RiskClass, action: DeviceAction | None, context: ToolContext
    ) -> None:
        summary = (action.summary if action is not None else "") or _summarize(call)
        if self.approver is None:
            device_note = (
                f"device {action.device!r} is configured with approval = true, so it always "
                "asks: run it where someone can answer (clawseed-edge chat)"
                if action is not None and action.requires_approval
                else "the user can run it from `clawseed-edge chat` (it asks on the terminal), "
                "add the tool to [autonomy].auto_approve, or set [autonomy].level to 'full'"
            )
            raise _Denied(
                f"{summary!r} needs approval, but no approver is set up, so no one was "
                f"asked and it did not run; {device_note}",
                "refused",
            )
        request = ApprovalRequest(
            id=uuid.uuid4().hex[:12],
            tool=call.name,
            arguments=dict(call.arguments),
            risk=risk.value,
            summary=summary,
            session_id=context.session_id,
        )
        announce_approval_request(request)
        try:
            async with asyncio.timeout(self.approval_timeout_s):
                decision = await approval_or_estop(self.approver, request, self.latch)
        except TimeoutError:
            raise _Denied(
                f"no one answered the approval request for {summary!r} within "
                f"{self.approval_timeout_s:g} s, so it did not run; ask again when the user can "
                "answer (the wait is [autonomy].approval_timeout_s)",
                "refused",
            ) from None
        except Exception as exc:
            log.exception("approver failed")
            raise _Denied(
                f"the approver failed ({type(exc).__name__}: {exc}), so no one approved "
                f"{summary!r} and it did not run; check the approver's connection (terminal "
                "or gateway) and ask again",
                "refused",
            ) from exc
        latched = latch_refusal(self.latch, call, None, action)
        if decision is None or latched is not None:  # an answer given now does nothing
            raise _Denied(
                latched or "the approval question was withdrawn", "refused", ESTOP_LATCHED
            )
        if not decision.approved:
            raise _Denied(refusal_text(summary, decision), "refused")

    def forbidden_path(self, path: Path) -> str | None:
        """The configured forbidden path that ``path`` lies in (symlinks resolved), or None.

        For what is read without a tool call (the prompt's identity files); a path that
        cannot be checked counts as forbidden.
        """
        try:
            return self._forbidden.hit(str(path), self._base_dir())
        except (OSError, ValueError):
            return "(a path that cannot be checked)"

    def _base_dir(self) -> Path:
        """Where relative paths start: the workspace (the shell tool's working directory)."""
        return self.workspace_dir or Path.cwd()

    def _record(
        self,
        call: ToolCall,
        decision: Literal["allowed", "denied", "approved", "refused"],
        reason: str,
        device: str | None,
        context: ToolContext,
    ) -> None:
        if self.observer is None:
            return
        try:
            self.observer.record(
                PolicyDecision(call.name, decision, reason, device, context.session_id)
            )
        except Exception:
            log.exception("observer failed to record a policy decision")


def _cap(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters, so a refusal never echoes a huge argument back."""
    return text if len(text) <= limit else text[:limit] + "..."


def _summarize(call: ToolCall, limit: int = 120) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in call.arguments.items())
    text = f"{call.name}({args})"
    return text if len(text) <= limit else text[: limit - 3] + "..."
