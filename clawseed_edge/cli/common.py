"""What the command groups share: loading the config, assembling, printing errors."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clawseed_edge.config.assembly import Runtime
    from clawseed_edge.config.file import LoadedConfig

__all__ = [
    "add_runtime_options",
    "described",
    "fail",
    "load_from_args",
    "open_runtime",
    "run_async",
]


def add_runtime_options(parser: argparse.ArgumentParser) -> None:
    """Options every command that runs the agent takes."""
    parser.add_argument(
        "--sim",
        action="store_true",
        help="run the configured devices on simulated (mock) pins; touches no hardware",
    )
    parser.add_argument("--provider", metavar="NAME", help="override [provider].name")
    parser.add_argument("--model", metavar="MODEL", help="override [provider].model")
    parser.add_argument(
        "--autonomy",
        choices=("read_only", "supervised", "full"),
        help="override [autonomy].level",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")


def described(doc: str | None) -> str:
    """A module docstring as a command's ``--help`` text: reST ````literals```` become `literals`."""
    return (doc or "").replace("``", "`").strip()


def fail(message: str, code: int = 1) -> int:
    """Print ``error: message`` on stderr, credentials redacted, and return ``code``."""
    from clawseed_edge.agent.redact import scrub  # only when something failed
    from clawseed_edge.api.wording import for_people

    # An error may quote a config value: a URL with a password, a key in a header.
    # A person reads it: the sentences written for a model are left out.
    print(f"error: {for_people(scrub(message))}", file=sys.stderr)
    return code


def load_from_args(args: argparse.Namespace) -> LoadedConfig:
    """Load the config named by ``--config`` (or the default), applying CLI overrides.

    ``--provider`` naming the configured provider keeps its model, server, fallbacks and
    environment overrides; naming another gives that provider its own defaults.
    """
    from clawseed_edge.config.file import load_config

    overrides: dict[str, object] = {}
    for option, key in (("provider", "provider.name"), ("model", "provider.model")):
        if getattr(args, option, None):
            overrides[key] = getattr(args, option)
    if getattr(args, "autonomy", None):
        overrides["autonomy.level"] = args.autonomy
    loaded = load_config(getattr(args, "config", None), overrides=overrides)
    if loaded.embedded:
        print(
            "note: no config file found; using the embedded default (simulated board, "
            "offline demo model). Run `clawseed-edge init` to write your own.",
            file=sys.stderr,
        )
    return loaded


def note_default_provider(loaded: LoadedConfig) -> None:
    """Say so when a config file has no ``[provider]`` table and the default (a local Ollama)
    is used: the model a person did not choose should not be a surprise."""
    import os
    import tomllib

    if loaded.embedded or any(k.startswith("CLAWSEED__PROVIDER__") for k in os.environ):
        return
    try:
        with open(loaded.source, "rb") as fh:
            tables = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return  # the loader has read it already; a file gone since is not this note's business
    p = loaded.config.provider
    if "provider" in tables or p.name != "ollama":
        return
    print(
        f"note: {loaded.source} has no [provider] table: using the default, a local Ollama "
        f"({p.model} at {p.base_url}); add one (docs/models.md) or pass --provider demo",
        file=sys.stderr,
    )


async def open_runtime(
    args: argparse.Namespace, *, say_provider: bool = False, **kwargs: Any
) -> Runtime:
    """Load the config and assemble the runtime (with the terminal approver by default);
    ``say_provider``: note a default provider the file does not name (``agent``, ``chat``)."""
    from clawseed_edge.agent.approval import CliApprover
    from clawseed_edge.config.assembly import assemble

    loaded = load_from_args(args)
    if say_provider and not getattr(args, "provider", None):
        note_default_provider(loaded)
    sim = bool(getattr(args, "sim", False))
    kwargs.setdefault("approver", CliApprover())
    return await assemble(loaded, sim=sim, **kwargs)


def run_async(args: argparse.Namespace, main: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run ``main`` on a fresh event loop, turning our errors into messages and exit codes."""
    import asyncio

    from clawseed_edge.api import ClawseedError

    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(main())
    except ClawseedError as exc:
        return fail(str(exc))
