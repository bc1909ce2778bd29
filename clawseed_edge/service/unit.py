"""The systemd unit and the udev rule, rendered with the paths of this install.

:func:`render_unit` gives ``clawseed-edge.service``: ``Type=notify`` with a watchdog, restarted
on failure, run by a dedicated user in the ``gpio``, ``i2c`` and ``dialout`` groups, hardened
to an exposure score of 1.5 by ``systemd-analyze security --offline=true`` while it still
reaches ``/dev/gpiochip*``, ``/dev/i2c-*``, ``/dev/ttyACM*``/``ttyUSB*`` and the network.
``systemd/clawseed-edge.service`` in the repository is this text with the default paths (a test
keeps the two equal). Why each hardening line is there, and why some are not: docs/service.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_EXECUTABLE",
    "STATE_DIR",
    "SUPPLEMENTARY_GROUPS",
    "UNIT_NAME",
    "UnitSettings",
    "render_udev_rule",
    "render_unit",
    "st_link_ids",
]

UNIT_NAME = "clawseed-edge.service"
STATE_DIR = Path("/var/lib/clawseed-edge")
DEFAULT_EXECUTABLE = Path("/opt/clawseed-edge/venv/bin/clawseed-edge")
#: The groups that own /dev/gpiochip*, /dev/i2c-* and /dev/ttyACM* on Raspberry Pi OS.
SUPPLEMENTARY_GROUPS = ("gpio", "i2c", "dialout")
#: systemd's kill for a hung loop; the pings go at half this.
WATCHDOG_S = 30


@dataclass(frozen=True, slots=True)
class UnitSettings:
    """What differs between installs.

    Attributes:
        executable: The ``clawseed-edge`` script of the venv the package is installed in.
        user: The system user the service runs as (its group has the same name).
        protect_home: ``yes``, or ``read-only`` when the venv lives under /home or /root
            (``yes`` would hide it from the service).
    """

    executable: Path = DEFAULT_EXECUTABLE
    user: str = "clawseed"
    protect_home: str = "yes"


_UNIT = """\
# clawseed-edge as a system service (written by `clawseed-edge service install`).
# Logs: journalctl -u clawseed-edge -f    State: systemctl status clawseed-edge
# Stop, estop, reload: systemctl stop | clawseed-edge estop | systemctl reload clawseed-edge
# Why each line is here: docs/service.md in the clawseed-edge repository.
[Unit]
Description=clawseed-edge AI-agent runtime
After=network-online.target
Wants=network-online.target

[Service]
# READY=1 once the peripherals are connected and the gateway listens; WATCHDOG=1 pings from
# the event loop at half of WatchdogSec: a hung loop is killed and restarted.
Type=notify
NotifyAccess=main
WatchdogSec={watchdog}
TimeoutStartSec=90
TimeoutStopSec=15
Restart=on-failure
RestartSec=5
User={user}
Group={user}
SupplementaryGroups={groups}
Environment=CLAWSEED_HOME={state}
Environment=PYTHONUNBUFFERED=1
# Docstrings and assert statements left out of the code objects: 2.5 MB less resident memory.
# `service install` byte-compiles this level too (the venv is read-only to the service).
Environment=PYTHONOPTIMIZE=2
ExecStart={exe} run
# Provider, model and autonomy without a restart (it says what needs one).
ExecReload={exe} reload
# After any stop, a SIGKILL or the watchdog's SIGABRT included: drive every output safe
# (without latching the emergency stop: a stop of the service is not one a person pressed).
ExecStopPost=-{exe} estop --no-latch
StateDirectory={state_name}
StateDirectoryMode=0700
WorkingDirectory={state}
UMask=0077

# Hardening: no privileges, a read-only system, only the devices and address families needed.
NoNewPrivileges=yes
CapabilityBoundingSet=
AmbientCapabilities=
ProtectSystem=strict
ProtectHome={protect_home}
PrivateTmp=yes
PrivateMounts=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
MemoryDenyWriteExecute=yes
RemoveIPC=yes
KeyringMode=private
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallFilter=~@privileged @resources
SystemCallErrorNumber=EPERM
DevicePolicy=closed
DeviceAllow=char-gpiochip rw
DeviceAllow=char-i2c rw
DeviceAllow=char-ttyACM rw
DeviceAllow=char-ttyUSB rw
# Descriptors: the gateway holds at most max_connections + 64 (and 32 per client address),
# far below this, so the control socket and the boards always find one.
LimitNOFILE=4096
MemoryHigh=300M
MemoryMax=400M

[Install]
WantedBy=multi-user.target
"""


def render_unit(settings: UnitSettings | None = None) -> str:
    """The unit file's text for ``settings`` (default: the paths of a /opt install)."""
    s = settings or UnitSettings()
    return _UNIT.format(
        watchdog=WATCHDOG_S,
        user=s.user,
        groups=" ".join(SUPPLEMENTARY_GROUPS),
        state=STATE_DIR,
        state_name=STATE_DIR.name,
        exe=s.executable,
        protect_home=s.protect_home,
    )


def st_link_ids() -> list[tuple[str, str]]:
    """The ST-LINK USB ids (vendor, product; lower-case hex) of every shipped board."""
    from clawseed_edge.peripherals import default_registry

    ids: dict[tuple[str, str], None] = {}
    for board in default_registry().list():
        for usb in board.usb:
            vid, _, pid = usb.lower().partition(":")
            ids[(vid, pid)] = None
    return sorted(ids)


def render_udev_rule(group: str = "dialout") -> str:
    """A udev rule giving ``group`` the ST-LINK's virtual COM port and its debug interface.

    The tty is what the service talks to; the USB device is what ``clawseed-edge flash``
    (pyocd) opens.
    """
    lines = [
        "# ST-LINK debug probes of the Nucleo boards clawseed-edge knows "
        "(written by `clawseed-edge service install`).",
        f"# The serial port and the probe belong to the {group} group, read-write.",
    ]
    for vid, pid in st_link_ids():
        lines.append(
            f'SUBSYSTEM=="tty", ATTRS{{idVendor}}=="{vid}", ATTRS{{idProduct}}=="{pid}", '
            f'GROUP="{group}", MODE="0660"'
        )
        lines.append(
            f'SUBSYSTEM=="usb", ATTR{{idVendor}}=="{vid}", ATTR{{idProduct}}=="{pid}", '
            f'GROUP="{group}", MODE="0660"'
        )
    return "\n".join(lines) + "\n"
