"""``clawseed-edge agent -m TEXT`` (one turn) and ``clawseed-edge chat`` (a REPL)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import signal
import sys
from typing import TYPE_CHECKING, Any

from .common import add_runtime_options, fail, open_runtime, run_async
from .signals import SignalStop

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from clawseed_edge.agent.approval import TerminalLines
    from clawseed_edge.config.assembly import Runtime

__all__ = ["register"]

_CHAT_HELP = (
    "commands: /help, /reset (forget this conversation), /status (pins), /exit (or Ctrl-D); "
    "// at the start sends a message that begins with /"
)
#: A chat line that is a command: one word after the slash (``/etc/hosts?`` is a message).
_COMMAND = re.compile(r"/[A-Za-z][\w-]*")


def register(sub: Any) -> None:
    agent = sub.add_parser(
        "agent",
        help="run one turn and print the answer",
        description="Run one turn: the answer goes to stdout, tool calls and results to stderr.",
    )
    agent.add_argument("-m", "--message", required=True, help="the message to the agent")
    agent.add_argument(
        "--session",
        help="continue this session (history is kept per id); default: a fresh one for this turn",
    )
    agent.add_argument("--json", action="store_true", help="print every event as a JSON line")
    agent.add_argument("--show-thinking", action="store_true", help="print reasoning on stderr")
    add_runtime_options(agent)
    agent.set_defaults(func=_agent)

    chat = sub.add_parser(
        "chat",
        help="talk to the agent in a REPL",
        description=f"An interactive conversation. {_CHAT_HELP}. Ctrl-C aborts a running turn.",
    )
    chat.add_argument("--session", default="cli", help="session id (history is kept per id)")
    chat.add_argument("--show-thinking", action="store_true", help="print reasoning on stderr")
    add_runtime_options(chat)
    chat.set_defaults(func=_chat)


def _agent(args: argparse.Namespace) -> int:
    # One turn is a conversation of its own: it must not carry (or add to) chat's history.
    if not args.message.strip():
        # Refused before anything opens: an empty turn only costs a model call.
        return fail("the message (-m) is empty: say what the agent should do")
    throwaway = not args.session
    if throwaway:
        import uuid

        args.session = f"oneshot-{uuid.uuid4().hex[:12]}"

    async def main() -> int:
        runtime = await open_runtime(args, say_provider=True)
        async with (
            runtime,
            _job_book(runtime),
            _fleet(runtime),
            SignalStop(runtime, _stopped_report(runtime)) as stop,
        ):
            try:
                before = _pin_states(runtime)
                try:
                    code = await _one_turn(runtime, args.message, args, stop)
                finally:
                    if throwaway:  # nobody can continue it: keeping it only grows the database
                        await _forget_session(runtime, args.session)
                _print_pin_changes(before, _pin_states(runtime))
                return stop.exit_code(code)
            except asyncio.CancelledError:
                return stop.exit_code()

    return run_async(args, main)


def _chat(args: argparse.Namespace) -> int:
    async def main() -> int:
        from clawseed_edge.agent.approval import CliApprover, TerminalLines

        # One reader for the prompt and the approval questions: a line typed after a question
        # timed out or was interrupted must reach the prompt, not the abandoned question.
        lines = TerminalLines()
        runtime = await open_runtime(args, say_provider=True, approver=CliApprover(lines=lines))
        async with (
            runtime,
            _job_book(runtime),
            _fleet(runtime),
            SignalStop(runtime, _stopped_report(runtime)) as stop,
        ):
            try:
                return stop.exit_code(await _repl(runtime, lines, args, stop))
            except asyncio.CancelledError:
                return stop.exit_code()

    return run_async(args, main)


async def _repl(
    runtime: Runtime, lines: TerminalLines, args: argparse.Namespace, stop: SignalStop
) -> int:
    """Read lines and run turns until /exit or end of input."""
    print(f"clawseed-edge chat ({_describe(runtime)}). {_CHAT_HELP}", file=sys.stderr)
    while True:
        sys.stdout.write("> ")
        sys.stdout.flush()
        line = await lines.readline()
        if not line:  # end of input (Ctrl-D)
            print(file=sys.stderr)
            return 0
        text = line.strip()
        if not text:
            continue
        command = text.split(maxsplit=1)[0]
        if _COMMAND.fullmatch(command):
            # Commands are answered here, never sent to the model (an unknown one included).
            if command in ("/exit", "/quit"):
                return 0
            if command == "/reset":
                await _forget_session(runtime, args.session)
                print("(conversation forgotten)", file=sys.stderr)
            elif command == "/status":
                _print_pins(_pin_states(runtime))
            elif command == "/help":
                print(_CHAT_HELP, file=sys.stderr)
            else:
                print(f"unknown command {command}; {_CHAT_HELP}", file=sys.stderr)
            continue
        if text.startswith("//"):
            text = text[1:]
        before = _pin_states(runtime)
        await _one_turn(runtime, text, args, stop)
        _print_pin_changes(before, _pin_states(runtime))


async def _one_turn(runtime: Runtime, text: str, args: argparse.Namespace, stop: SignalStop) -> int:
    """Run a turn, printing its events; Ctrl-C aborts the turn, not the process."""
    from clawseed_edge.api import ToolContext

    from .render import EventPrinter

    printer = EventPrinter(
        show_thinking=getattr(args, "show_thinking", False),
        json_lines=getattr(args, "json", False),
    )
    session = args.session
    context = ToolContext(session_id=session, channel="cli")
    with stop.turn(session):
        async for event in runtime.agent.turn(text, session_id=session, context=context):
            printer.handle(event)
    return printer.exit_code


@contextlib.asynccontextmanager
async def _job_book(runtime: Runtime) -> AsyncIterator[None]:
    """The cron and automation tools over state.db while the runtime is open: what the model
    schedules or automates here is written as `cron add` / `automations add` write it, and a
    running service is told (it runs the jobs and the rules)."""
    from clawseed_edge.scheduler import register_job_book
    from clawseed_edge.scheduler.automation_setup import register_automation_book
    from clawseed_edge.state import StateDB

    from .automations_cmd import tell_service_automations
    from .cron_cmd import tell_service

    async with await StateDB.open(runtime.loaded.home / "state.db") as db:
        if runtime.loaded.config.scheduler.enabled:
            register_job_book(runtime, db, notify=lambda: tell_service(runtime.loaded))
        register_automation_book(
            runtime, db, notify=lambda: tell_service_automations(runtime.loaded)
        )
        async with _history_tool(runtime):
            yield


@contextlib.asynccontextmanager
async def _history_tool(runtime: Runtime) -> AsyncIterator[None]:
    """``sensor_history`` over the service's history file, where one exists: "how cold was it
    overnight?" is answered here too (the service writes the file; this only reads it)."""
    from clawseed_edge.service.recorder import HISTORY_FILE

    path = runtime.loaded.home / HISTORY_FILE
    if not runtime.loaded.config.history.enabled or not path.exists():
        yield
        return
    from clawseed_edge.state import SensorHistory
    from clawseed_edge.tools.sensor_history import SensorHistoryTool

    history = await SensorHistory.open(path)
    try:
        runtime.agent.registry.register_many([SensorHistoryTool(history)])
        yield
    finally:
        await history.aclose()


@contextlib.asynccontextmanager
async def _fleet(runtime: Runtime) -> AsyncIterator[None]:
    """With ``[mqtt]`` on: the other nodes' devices reachable from this process (docs/mqtt.md).

    A broker that cannot be reached (or a missing ``mqtt`` extra) is said on stderr, and the
    turn goes on with this node's own devices.
    """
    if runtime.remote is None:
        yield
        return
    settings = runtime.loaded.config.mqtt
    try:
        import aiomqtt

        from clawseed_edge.channels.mqtt.connection import mqtt_password
        from clawseed_edge.channels.mqtt.oneshot import FleetLink
    except ImportError:
        print(
            "warning: [mqtt] is on but the mqtt extra is missing "
            "(pip install 'clawseed-edge[mqtt]'); other nodes' devices are out of reach",
            file=sys.stderr,
        )
        yield
        return
    link = FleetLink(
        settings, runtime.remote, password=mqtt_password(settings, runtime.loaded.home)
    )
    try:
        await link.__aenter__()
    except aiomqtt.MqttError as exc:
        print(
            f"warning: no MQTT broker at {settings.host}:{settings.port} ({exc}); "
            "other nodes' devices are out of reach",
            file=sys.stderr,
        )
        yield
        return
    try:
        yield
    finally:
        await link.aclose()


def _stopped_report(runtime: Runtime) -> Callable[[signal.Signals], None]:
    """What a stop signal prints once the safe values are applied: the pins as they now are."""

    def report(sig: signal.Signals) -> None:
        print(f"\nstopped by {sig.name}; safe values applied:", file=sys.stderr)
        _print_pins(_pin_states(runtime))

    return report


async def _forget_session(runtime: Runtime, session: str) -> None:
    """Forget a session in the agent and in the session store (so it stays forgotten)."""
    from clawseed_edge.api import MemoryUnavailable, SessionStore

    runtime.agent.reset(session)
    if isinstance(runtime.memory, SessionStore):
        try:
            await runtime.memory.delete_session(session)
        except MemoryUnavailable:  # [memory] backend = "none": nothing was stored
            pass


def _describe(runtime: Runtime) -> str:
    p = runtime.provider
    boards = ", ".join(f"{x.name}:{x.board_type}" for x in runtime.peripherals) or "no hardware"
    return f"model {p.name}/{p.model}; {boards}"


def _pin_states(runtime: Runtime) -> dict[str, tuple[str, str]]:
    """``{"GPIO23 (fan)": ("on", "0")}``: each pin's logical state and its line level."""
    states: dict[str, tuple[str, str]] = {}
    for p in runtime.peripherals:
        pin_states = getattr(p, "pin_states", None)
        if pin_states is None:
            continue
        for pin, info in pin_states().items():
            device = info.get("device", "")
            key = f"{pin} ({device})" if device else pin
            states[key] = (_logical(info), _number(info.get("level")))
    return states


# Kinds whose value is on/off; inputs read active/inactive; the rest (pwm_led, servo) a level.
_SWITCHED = frozenset({"led", "relay", "digital_out", "buzzer"})
_INPUTS = frozenset({"button", "digital_in"})


def _logical(info: dict[str, Any]) -> str:
    value, kind = info.get("value"), info.get("kind")
    if value is None:
        return "closed"
    if kind in _SWITCHED and isinstance(value, int | float):
        return "on" if value else "off"
    if kind in _INPUTS and isinstance(value, int | float):
        return "active" if value else "inactive"
    return _number(value)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _print_pin_changes(
    before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]
) -> None:
    # The logical state is what the user asked for; the line level is what a meter would read
    # (an active-low relay is "on" with its line at 0).
    for key, (value, line) in after.items():
        old_value, old_line = before.get(key, ("?", "?"))
        if (old_value, old_line) != (value, line):
            print(
                f"[pin] {key}: {old_value} -> {value} (line {old_line} -> {line})", file=sys.stderr
            )


def _print_pins(states: dict[str, tuple[str, str]]) -> None:
    if not states:
        print("(no pins)", file=sys.stderr)
    for key, (value, line) in states.items():
        print(f"[pin] {key}: {value} (line {line})", file=sys.stderr)
