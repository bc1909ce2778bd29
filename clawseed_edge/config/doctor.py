"""``clawseed-edge doctor``: checks of this machine and this config, each with its fix.

Each check gives a :class:`CheckResult`: ``ok``, ``warn``, ``fail`` or ``skip``, one line on
what was found, and what to do. The machine is seen through a :class:`Machine` (a root
directory, the user's groups, whether a device node is usable), so tests run every check
against a fake ``/proc`` + ``/sys`` + ``/dev`` tree with the same code as on a Pi. Nothing
here writes: the memory database is opened read-only, devices are never opened.

The hardware checks (GPIO, I2C, 1-Wire, DHT, serial) are in :mod:`.doctor_hardware`, the
types they share in :mod:`.doctor_machine`; this module has the software checks and
:func:`run_checks`, which bounds every check and the whole.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import logging
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clawseed_edge.peripherals.detect import detect_boards

from .doctor_camera import check_camera
from .doctor_hardware import (
    check_board,
    check_dht,
    check_gpio,
    check_i2c,
    check_one_wire,
    check_serial,
)
from .doctor_machine import Check, CheckResult, DoctorContext, Machine
from .file import LoadedConfig
from .paths import resolve_in_home

__all__ = [
    "STATUSES",
    "Check",
    "CheckResult",
    "DoctorContext",
    "Machine",
    "default_checks",
    "run_checks",
]

_log = logging.getLogger(__name__)

STATUSES = ("ok", "warn", "fail", "skip")
#: The whole doctor run; a check still running then is reported as failed.
TOTAL_TIMEOUT_S = 20.0
#: One network check (the model server).
NETWORK_TIMEOUT_S = 3.0
#: The memory database's quick_check.
QUICK_CHECK_TIMEOUT_S = 5.0
#: Below this much free space in $CLAWSEED_HOME: a failure; below WARN: a warning.
DISK_FAIL_MB = 100
DISK_WARN_MB = 500

_PACKAGES = ("msgspec", "httpx", "aiosqlite", "gpiozero", "lgpio", "smbus2", "pyserial")
#: Base dependencies: without one of these something fails at run time.
_REQUIRED = ("msgspec", "httpx", "aiosqlite", "gpiozero", "smbus2", "pyserial")


# --- software ---------------------------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_python(ctx: DoctorContext) -> CheckResult:
    """Python and the versions of the packages the runtime uses."""
    from clawseed_edge import __version__

    py = ".".join(map(str, sys.version_info[:3]))
    found = [f"{name} {_version(name)}" for name in _PACKAGES if _version(name)]
    summary = f"Python {py}, clawseed-edge {__version__}; " + ", ".join(found)
    missing = [name for name in _REQUIRED if _version(name) is None]
    if missing:
        return CheckResult(
            "python", "fail", f"{summary}; missing: {', '.join(missing)}",
            "reinstall in the venv: pip install clawseed-edge (or `pip install -e .` in the repo)",
        )  # fmt: skip
    return CheckResult("python", "ok", summary)


def check_packages(ctx: DoctorContext) -> CheckResult:
    """The packages of everything the config turns on (the gateway, a provider's SDK)."""
    from .packages import package_needs

    if ctx.loaded is None:
        return CheckResult("packages", "skip", "no config: nothing turned on to check")
    needs = package_needs(ctx.loaded.config)
    missing = [need for need in needs if need.missing()]
    if missing:
        return CheckResult(
            "packages",
            "fail",
            "; ".join(
                f"{n.feature} needs {', '.join(n.missing())} (not installed)" for n in missing
            ),
            "; ".join(dict.fromkeys(n.install_command() for n in missing)),
        )
    if not needs:
        return CheckResult("packages", "ok", "nothing turned on needs an optional package")
    return CheckResult("packages", "ok", "installed for " + ", ".join(n.feature for n in needs))


#: Where ``service install`` writes the unit (service/install.py; a test keeps them equal).
UNIT_FILE = Path("etc/systemd/system/clawseed-edge.service")


def check_bytecode(ctx: DoctorContext) -> CheckResult:
    """The installed code has up-to-date bytecode (under systemd the service cannot write it)."""
    from .bytecode import compile_command, describe, stale_sources

    # With the unit installed, also the service's level (PYTHONOPTIMIZE=2, the standard
    # library's modules included); without it, what the commands people type load.
    service = (ctx.machine.root / UNIT_FILE).is_file()
    stale, total = stale_sources(service=service)
    if not stale:
        return CheckResult("bytecode", "ok", describe(stale, total))
    if not service and all(os.access(p.parent, os.W_OK) for p in stale[:64]):
        # A checkout being worked on (or a venv of this user's) and no service: Python writes
        # the missing bytecode itself as the modules are imported; nothing to do.
        return CheckResult(
            "bytecode",
            "ok",
            f"{len(stale)} of {total} modules are compiled as they are imported (this user can "
            "write their __pycache__; no service is installed)",
        )
    return CheckResult(
        "bytecode",
        "warn",
        describe(stale, total) + "; the service compiles them from source at every start "
        "(it cannot write __pycache__ into a read-only venv)",
        "`sudo clawseed-edge service install` byte-compiles them, or: "
        f"sudo {compile_command(stale[0].parent)}",
    )


async def check_config(ctx: DoctorContext) -> CheckResult:
    """The config file loads and passes every check a run makes (the error names file and key)."""
    from clawseed_edge.api import ConfigError, HardwareError

    from .check import check_as_a_run

    if ctx.loaded is not None:
        try:
            await check_as_a_run(ctx.loaded, packages=False)  # the packages check says it
        except (ConfigError, HardwareError) as exc:
            return CheckResult(
                "config", "fail", str(exc), "fix what is named above (`clawseed-edge config "
                "check` checks again without opening hardware)",
            )  # fmt: skip
    if ctx.loaded is None:
        return CheckResult(
            "config",
            "fail",
            ctx.config_error or "the config did not load",
            "fix the key named above (`clawseed-edge config check` checks again), or start "
            "afresh with `clawseed-edge init --force`",
        )
    if ctx.loaded.embedded:
        return CheckResult(
            "config",
            "warn",
            "no config file: the embedded default runs (simulated pins, the demo model)",
            "`clawseed-edge init` writes one for this board",
        )
    return CheckResult("config", "ok", f"{ctx.loaded.source} is valid")


async def check_provider(ctx: DoctorContext) -> CheckResult:
    """The model server answers and has the model (Ollama); a remote provider has its key."""
    if ctx.loaded is None:
        return CheckResult("provider", "skip", "no config: no provider to check")
    pc = ctx.loaded.config.provider
    name = pc.name
    if name == "demo":
        return CheckResult(
            "provider", "ok", "the demo model: offline rules, not a language model",
        )  # fmt: skip
    if name in ("ollama", "local"):
        return await _check_ollama(pc.base_url or "http://127.0.0.1:11434", pc.model or "")
    if pc.api_key or not pc.api_key_env:
        return CheckResult("provider", "ok", f"{name} model {pc.model} (not contacted)")
    from .secrets import lookup_secret

    if lookup_secret(pc.api_key_env, ctx.loaded.home / "secrets"):
        return CheckResult(
            "provider", "ok", f"{name} model {pc.model}; key {pc.api_key_env} is set "
            "(not contacted)",
        )  # fmt: skip
    return CheckResult(
        "provider",
        "fail",
        f"{name}: no API key in {pc.api_key_env} (environment or secrets file)",
        f"`clawseed-edge secrets set {pc.api_key_env}`",
    )


def _same_model(wanted: str, pulled: str) -> bool:
    def norm(m: str) -> str:
        return m if ":" in m else f"{m}:latest"

    return norm(wanted) == norm(pulled)


async def _check_ollama(base_url: str, model: str) -> CheckResult:
    from clawseed_edge.providers.small_http import request_json

    url = base_url.rstrip("/")
    try:
        response = await request_json(f"{url}/api/tags", timeout_s=NETWORK_TIMEOUT_S)
        tags = response.json() if response.status == 200 else None
    except (OSError, ValueError) as exc:
        return CheckResult(
            "provider",
            "fail",
            f"no Ollama answers at {url} ({exc.__class__.__name__}: {exc})",
            "install Ollama and start it (`sudo systemctl start ollama`), or set [provider] "
            "base_url to where it runs",
        )
    except Exception as exc:  # not HTTP at all
        return CheckResult(
            "provider", "fail", f"{url} does not answer like Ollama ({exc})",
            "check [provider] base_url",
        )  # fmt: skip
    models = tags.get("models") if isinstance(tags, dict) else None
    if not isinstance(models, list):
        return CheckResult(
            "provider", "fail", f"{url}/api/tags did not answer like Ollama "
            f"(HTTP {response.status})", "check [provider] base_url",
        )  # fmt: skip
    names = [str(m.get("name", "")) for m in models if isinstance(m, dict)]
    match = next((m for m in models if isinstance(m, dict) and _same_model(model, m.get("name", ""))), None)  # fmt: skip
    if match is None:
        pulled = ", ".join(names[:8]) or "none"
        return CheckResult(
            "provider",
            "fail",
            f"Ollama at {url} answers, but model {model} is not pulled (pulled: {pulled})",
            f"`ollama pull {model}`",
        )
    size = match.get("size")
    size_text = f" ({size / 1e9:.1f} GB)" if isinstance(size, (int, float)) else ""
    return CheckResult("provider", "ok", f"Ollama at {url} answers; {model} is pulled{size_text}")


def check_memory(ctx: DoctorContext) -> CheckResult:
    """The memory database passes ``PRAGMA quick_check`` (opened read-only, bounded)."""
    if ctx.loaded is None:
        return CheckResult("memory", "skip", "no config: no memory database to check")
    config = ctx.loaded.config.memory
    if config.backend != "sqlite":
        return CheckResult("memory", "skip", f"memory backend {config.backend!r}: no database")
    path = resolve_in_home(config.path, ctx.loaded.home)
    if not path.exists():
        return CheckResult("memory", "skip", f"{path} does not exist yet (made at the first run)")
    deadline = time.monotonic() + QUICK_CHECK_TIMEOUT_S
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=2.0)
        try:
            # A big database on a slow SD card: stop the check at the deadline.
            connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10000)
            rows = connection.execute("PRAGMA quick_check").fetchmany(5)
        finally:
            connection.close()
    except sqlite3.Error as exc:
        if "interrupted" in str(exc):
            return CheckResult(
                "memory", "warn", f"{path}: quick_check did not finish in "
                f"{QUICK_CHECK_TIMEOUT_S:g} s", "run it when the device is idle",
            )  # fmt: skip
        return CheckResult(
            "memory", "fail", f"{path} cannot be read: {exc}",
            "stop the service; if the file is damaged, move it aside (a new one is made)",
        )  # fmt: skip
    result = [str(r[0]) for r in rows]
    size_mb = path.stat().st_size / 2**20
    if result == ["ok"]:
        return CheckResult("memory", "ok", f"{path} ({size_mb:.1f} MB) passes quick_check")
    return CheckResult(
        "memory",
        "fail",
        f"{path} is damaged: {'; '.join(result)[:300]}",
        "stop the service, `clawseed-edge memory export` what still reads, then move the "
        "file aside (a new one is made at the next start)",
    )


def check_disk(ctx: DoctorContext) -> CheckResult:
    """Free space where ``$CLAWSEED_HOME`` lives."""
    home = ctx.loaded.home if ctx.loaded is not None else None
    if home is None:
        from .paths import clawseed_home

        home = clawseed_home()
    where = home
    while not where.exists() and where != where.parent:
        where = where.parent
    free_mb = shutil.disk_usage(where).free / 2**20
    summary = f"{free_mb / 1024:.1f} GB free for {home}"
    if free_mb < DISK_FAIL_MB:
        return CheckResult("disk", "fail", summary, "free some space: memory and logs need it")
    if free_mb < DISK_WARN_MB:
        return CheckResult("disk", "warn", summary, "free some space before memory grows")
    return CheckResult("disk", "ok", summary)


# --- running them -----------------------------------------------------------------------------


async def check_mcp_servers(ctx: DoctorContext) -> CheckResult | list[CheckResult]:
    """Each ``[[mcp.servers]]`` starts and lists its tools (started at once, then stopped);
    nothing is shown when none is configured."""
    servers = ctx.loaded.config.mcp.servers if ctx.loaded is not None else []
    if not servers:
        return []
    from clawseed_edge.tools.mcp_client import McpServerConnection

    networks = ctx.loaded.config.tools.http.allowed_networks if ctx.loaded else []

    from clawseed_edge.api import ConfigInvalid

    from .mcp import with_secret_env

    secrets = ctx.loaded.home / "secrets" if ctx.loaded else None

    async def one(settings: Any) -> CheckResult:
        try:  # launched as the service launches it: env_from_secrets looked up
            settings = with_secret_env(settings, secrets) if secrets else settings
        except ConfigInvalid as exc:
            return CheckResult(f"mcp {settings.name}", "fail", str(exc))
        connection = McpServerConnection(settings, networks)
        try:
            tools = await connection.start()
        except Exception as exc:
            return CheckResult(
                f"mcp {settings.name}", "fail", str(exc),
                "run its command by hand to see why; its stderr is in the service's log",
            )  # fmt: skip
        finally:
            await connection.aclose()
        names = ", ".join(t.name for t in tools[:8]) + (" ..." if len(tools) > 8 else "")
        return CheckResult(
            f"mcp {settings.name}", "ok" if tools else "warn",
            f"started; {len(tools)} tool(s) let in: {names or 'none (see its tools / denied)'}",
        )  # fmt: skip

    return list(await asyncio.gather(*(one(s) for s in servers)))


def default_checks() -> list[Check]:
    """Every built-in check, in the order they are shown."""
    return [
        check_python,
        check_bytecode,
        check_config,
        check_packages,
        check_board,
        check_gpio,
        check_i2c,
        check_one_wire,
        check_dht,
        check_serial,
        check_camera,
        check_provider,
        check_memory,
        check_disk,
        check_mcp_servers,
    ]


def make_context(config_path: str | Path | None, machine: Machine | None = None) -> DoctorContext:
    """Load the config (an error is kept for the config check) and detect the boards."""
    from clawseed_edge.api import ConfigError

    from .file import load_config

    machine = machine or Machine()
    try:
        loaded: LoadedConfig | None = load_config(config_path)
        error = None
    except ConfigError as exc:
        loaded, error = None, str(exc)
    return DoctorContext(machine, loaded, error, detect_boards(machine.root))


async def run_checks(
    ctx: DoctorContext,
    checks: Sequence[Check] | None = None,
    *,
    total_timeout_s: float = TOTAL_TIMEOUT_S,
) -> list[CheckResult]:
    """Run ``checks`` in order; never raises for a check's failure.

    A check that raises becomes a ``fail`` naming the exception; once ``total_timeout_s`` has
    passed, the running check is stopped and the remaining ones are reported as not run.
    """
    results: list[CheckResult] = []
    deadline = time.monotonic() + total_timeout_s
    for check in checks if checks is not None else default_checks():
        name = getattr(check, "__name__", "check").removeprefix("check_")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            results.append(CheckResult(name, "fail", "not run: doctor ran out of time"))
            continue
        try:
            outcome: Any = check(ctx)
            if asyncio.iscoroutine(outcome):
                outcome = await asyncio.wait_for(outcome, remaining)
        except TimeoutError:
            outcome = CheckResult(name, "fail", f"did not finish within {total_timeout_s:g} s")
        except Exception as exc:
            _log.debug("doctor check %s failed", name, exc_info=True)
            outcome = CheckResult(name, "fail", f"the check itself failed: {type(exc).__name__}: {exc}")  # fmt: skip
        results.extend(outcome if isinstance(outcome, list) else [outcome])
    return results
