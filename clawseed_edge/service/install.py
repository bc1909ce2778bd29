"""``clawseed-edge service install|uninstall``: the user, the unit, the udev rule, the state dir.

:func:`install` does, in order: check that systemd runs here (and the commands it needs are
there) before anything is written; create the ``gpio``/``i2c``/``dialout`` groups that are missing
(``SupplementaryGroups=`` naming a missing group stops the unit from starting) and the system
user; write the unit with this install's ``clawseed-edge`` and the udev rule for the ST-LINK
boards; write ``config.toml`` in the state directory if there is none (``clawseed-edge init``);
byte-compile the package and its dependencies (the unit's read-only venv cannot keep the
bytecode it would compile at every start); reload udev and systemd; enable the unit (and start
it with ``now``).

With ``root`` other than ``/`` (tests, images built offline) the files are written under that
directory and no system command runs: each is printed as ``would run: ...``, the byte-compiling
too (it would write into the live venv) unless ``byte_compile`` asks for it.
"""

from __future__ import annotations

import grp
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clawseed_edge.api import ClawseedError

from .unit import (
    STATE_DIR,
    SUPPLEMENTARY_GROUPS,
    UNIT_NAME,
    UnitSettings,
    render_udev_rule,
    render_unit,
)

__all__ = [
    "InstallPaths",
    "ServiceInstallError",
    "find_executable",
    "install",
    "uninstall",
]

UDEV_RULE_NAME = "70-clawseed-edge.rules"
Runner = Callable[[Sequence[str]], int]


class ServiceInstallError(ClawseedError, RuntimeError):
    """The service could not be installed (not root, no ``clawseed-edge`` script, a command
    that failed); the message says what to do."""

    code = "service_install_failed"


@dataclass(frozen=True, slots=True)
class InstallPaths:
    """Where the files go under ``root`` (``/`` on a real install)."""

    root: Path = Path("/")

    def under(self, path: Path) -> Path:
        return self.root / path.relative_to("/")

    @property
    def unit(self) -> Path:
        return self.under(Path("/etc/systemd/system") / UNIT_NAME)

    @property
    def udev_rule(self) -> Path:
        return self.under(Path("/etc/udev/rules.d") / UDEV_RULE_NAME)

    @property
    def state_dir(self) -> Path:
        return self.under(STATE_DIR)

    @property
    def live(self) -> bool:
        """Whether this is the running system (system commands run) or a staging root."""
        return self.root.resolve() == Path("/")


@dataclass(slots=True)
class Report:
    """What an install or uninstall did, line by line (printed by the command)."""

    lines: list[str] = field(default_factory=list)

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def find_executable() -> Path:
    """The ``clawseed-edge`` script of the running interpreter's venv (what ExecStart runs).

    Raises:
        ServiceInstallError: There is none beside ``sys.executable`` and none on PATH.
    """
    beside = Path(sys.executable).parent / "clawseed-edge"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside.absolute()
    found = shutil.which("clawseed-edge")
    if found:
        return Path(found).absolute()
    raise ServiceInstallError(
        f"no clawseed-edge script beside {sys.executable} or on PATH; install the package "
        "into a venv (pip install clawseed-edge) and run that venv's clawseed-edge"
    )


def unit_settings(executable: Path, user: str) -> UnitSettings:
    """``ProtectHome=read-only`` when the venv is under /home or /root (``yes`` hides it)."""
    in_home = any(executable.is_relative_to(p) for p in (Path("/home"), Path("/root")))
    return UnitSettings(
        executable=executable, user=user, protect_home="read-only" if in_home else "yes"
    )


def _run_or_show(command: Sequence[str], paths: InstallPaths, run: Runner, say: Report) -> int:
    shown = shlex.join(command)
    if not paths.live:
        say(f"would run: {shown}")
        return 0
    say(f"running: {shown}")
    return run(command)


def _require_root(paths: InstallPaths, what: str) -> None:
    if paths.live and os.geteuid() != 0:
        raise ServiceInstallError(
            f"`clawseed-edge service {what}` needs root (it writes /etc/systemd/system and "
            f"creates a system user); run it with sudo: sudo {sys.argv[0]} service {what}, or "
            "pass --root DIR to write the files under DIR instead"
        )


#: The commands a live install runs that it cannot do without (udevadm only notes a failure).
REQUIRED_COMMANDS = ("systemctl", "groupadd", "useradd", "usermod")


def systemd_booted() -> bool:
    """Whether systemd is the running init (sd_booted(3): ``/run/systemd/system`` exists)."""
    return Path("/run/systemd/system").is_dir()


def _require_systemd(paths: InstallPaths) -> None:
    """Refuse a live install on a machine it cannot finish on (a container, another init)."""
    if not paths.live:
        return
    if not systemd_booted():
        raise ServiceInstallError(
            "this machine does not run systemd (no /run/systemd/system), so the service "
            "could not be started at boot; nothing was written. Run `clawseed-edge run` under "
            "your own supervisor, or pass --root DIR to stage the files for an image"
        )
    missing = [c for c in REQUIRED_COMMANDS if shutil.which(c) is None]
    if missing:
        raise ServiceInstallError(
            f"{', '.join(missing)} not found on PATH; `service install` needs them (Debian's "
            "systemd and passwd packages); nothing was written"
        )


def _write(path: Path, text: str, say: Report, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    say(f"wrote {path}")


def _subprocess_run(command: Sequence[str]) -> int:
    return subprocess.run(list(command), check=False, stdin=subprocess.DEVNULL).returncode


def install(
    root: Path = Path("/"),
    *,
    user: str = "clawseed",
    enable: bool = True,
    now: bool = False,
    executable: Path | None = None,
    run: Runner = _subprocess_run,
    init_args: Sequence[str] = (),
    byte_compile: bool | None = None,
) -> list[str]:
    """Install the service; returns the lines that say what was done.

    ``init_args`` go to ``clawseed-edge init`` when the state directory has no config yet
    (``--gateway``: phones on the network reach the web app). ``byte_compile``: compile this
    venv's code (default: on a live install only; a staging root leaves the live venv alone
    and prints the command, unless this is True).

    Raises:
        ServiceInstallError: Not root on a live install, no ``clawseed-edge`` script, or a
            system command failed (the message names it).
    """
    paths = InstallPaths(root)
    _require_root(paths, "install")
    _require_systemd(paths)  # before the user and the files: a failed install writes nothing
    exe = executable or find_executable()
    say = Report()
    _create_groups_and_user(user, paths, run, say)
    settings = unit_settings(exe, user)
    if settings.protect_home != "yes":
        say(
            f"note: {exe} is under a home directory, so the unit has ProtectHome=read-only; "
            "a venv in /opt/clawseed-edge scores better"
        )
    _write(paths.unit, render_unit(settings), say)
    _write(paths.udev_rule, render_udev_rule(), say)
    _ensure_config(exe, paths, run, say, init_args)
    if byte_compile if byte_compile is not None else paths.live:
        _byte_compile(say)
    else:
        from clawseed_edge.config.bytecode import compile_command

        say(f"would run: {compile_command(sys.prefix)}")
    steps: list[list[str]] = [
        ["udevadm", "control", "--reload-rules"],
        ["udevadm", "trigger", "--subsystem-match=tty", "--subsystem-match=usb"],
        ["systemctl", "daemon-reload"],
    ]
    if enable:
        steps.append(["systemctl", "enable", *(["--now"] if now else []), UNIT_NAME])
    for command in steps:
        code = _run_or_show(command, paths, run, say)
        if code != 0 and command[0] == "systemctl":
            raise ServiceInstallError(
                f"`{shlex.join(command)}` failed (exit {code}); see its message above and "
                f"`journalctl -u {UNIT_NAME}`"
            )
        if code != 0:
            say(f"note: `{shlex.join(command)}` failed (exit {code}); replug the Nucleo board")
    if not paths.live:
        say(f"staged under {paths.root}: no user created, no system command run")
    elif enable and not now:
        say(f"enabled; start it with: systemctl start {UNIT_NAME}")
    return say.lines


def _create_groups_and_user(user: str, paths: InstallPaths, run: Runner, say: Report) -> None:
    for group in SUPPLEMENTARY_GROUPS:
        if not _group_exists(group) or not paths.live:
            if _run_or_show(["groupadd", "--system", "-f", group], paths, run, say) != 0:
                raise ServiceInstallError(f"could not create the group {group!r} (groupadd)")
    if _user_exists(user) and paths.live:
        command = ["usermod", "--append", "--groups", ",".join(SUPPLEMENTARY_GROUPS), user]
    else:
        command = [
            "useradd",
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            str(STATE_DIR),
            "--shell",
            "/usr/sbin/nologin",
            "--groups",
            ",".join(SUPPLEMENTARY_GROUPS),
            user,
        ]
    if _run_or_show(command, paths, run, say) != 0:
        raise ServiceInstallError(f"could not create the system user {user!r} ({command[0]})")


def _ensure_config(
    exe: Path, paths: InstallPaths, run: Runner, say: Report, init_args: Sequence[str] = ()
) -> None:
    """``clawseed-edge init [init_args]`` in the state directory unless it has a config.toml
    already."""
    config = paths.state_dir / "config.toml"
    if config.exists():
        say(f"kept {config}")
        if "--gateway" in init_args:
            _say_gateway_state(config, say)
        return
    paths.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {**os.environ, "CLAWSEED_HOME": str(paths.state_dir)}
    # This interpreter's package: the same code the unit's ExecStart runs.
    code = subprocess.run(
        [sys.executable, "-m", "clawseed_edge", "init", *init_args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    ).returncode
    if code != 0 or not config.exists():
        raise ServiceInstallError(
            f"`clawseed-edge init` could not write {config} (exit {code}); run it yourself: "
            f"sudo CLAWSEED_HOME={paths.state_dir} {exe} init"
        )
    say(f"wrote {config} (edit it, then: systemctl reload {UNIT_NAME})")
    # systemd gives StateDirectory= to the service's user at start (chown), so root owning
    # it now is fine.


def _say_gateway_state(config: Path, say: Report) -> None:
    """``--gateway`` with a config kept as it was: say whether phones can reach its gateway
    (the file is the user's; it is not rewritten)."""
    from clawseed_edge.api import ConfigError
    from clawseed_edge.config.file import load_config

    try:
        gateway = load_config(config).config.gateway
    except ConfigError as exc:
        say(f"note: --gateway changed nothing: {config} was kept and does not load ({exc})")
        return
    loopback = gateway.host in ("127.0.0.1", "::1", "localhost")
    if gateway.enabled and not loopback:
        return
    wanted = 'enabled = true, host = "0.0.0.0", allow_public_bind = true'
    found = "is off" if not gateway.enabled else f"listens on {gateway.host} only"
    say(
        f"note: --gateway changed nothing: the kept {config} has a gateway that {found}; "
        f"for phones set [gateway] {wanted} in it, then: systemctl reload {UNIT_NAME}"
    )


def _byte_compile(say: Report) -> None:
    """Compile what has no up-to-date bytecode: under ``ProtectSystem=strict`` the service
    could not write it, and would compile every module from source at every start."""
    from clawseed_edge.config.bytecode import byte_compile, compile_command

    report = byte_compile()
    say(
        f"byte-compiled {report.compiled} of {report.total} modules of the package and its "
        "dependencies (the rest were up to date)"
    )
    if report.failed_count:
        say(
            f"note: {report.failed_count} could not be byte-compiled (first: {report.failed[0]}); "
            "they are compiled at every start. Run this as the owner of the venv (root), or: "
            f"sudo {compile_command(report.failed[0])}"
        )


def uninstall(root: Path = Path("/"), *, run: Runner = _subprocess_run) -> list[str]:
    """Stop and disable the unit, remove it and the udev rule; the state and user stay.

    Raises:
        ServiceInstallError: Not root on a live install.
    """
    paths = InstallPaths(root)
    _require_root(paths, "uninstall")
    say = Report()
    _run_or_show(["systemctl", "disable", "--now", UNIT_NAME], paths, run, say)
    for path in (paths.unit, paths.udev_rule):
        if path.exists():
            path.unlink()
            say(f"removed {path}")
    _run_or_show(["systemctl", "daemon-reload"], paths, run, say)
    _run_or_show(["udevadm", "control", "--reload-rules"], paths, run, say)
    say(
        f"kept {paths.state_dir} (config, memory) and the user; remove them yourself if "
        "you want them gone"
    )
    return say.lines


def _group_exists(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
