"""The long-running service (``clawseed-edge run`` / ``gateway``).

:class:`Service` hosts the agent, the input events of the wired devices, the gateway when
``[gateway] enabled`` (or ``clawseed-edge gateway``), and the local control socket
(``$CLAWSEED_HOME/control.sock``) through which ``pair``, ``status``, ``estop`` and ``reload``
reach it. Signals lead to the safe state: SIGTERM/SIGINT/SIGHUP apply it and shut down in order,
SIGUSR1 applies it and keeps running. Under systemd it notifies readiness and pings the watchdog
(:mod:`.notify`); ``clawseed-edge service install`` writes its unit (:mod:`.unit`, :mod:`.install`).
"""

from .control import (
    ControlError,
    ControlServer,
    ControlStream,
    control_path,
    control_request,
    control_stream,
    find_control_socket,
    stream_answer,
)
from .process import Service, ServiceOptions

__all__ = [
    "ControlError",
    "ControlServer",
    "ControlStream",
    "Service",
    "ServiceOptions",
    "control_path",
    "control_request",
    "control_stream",
    "find_control_socket",
    "stream_answer",
]
