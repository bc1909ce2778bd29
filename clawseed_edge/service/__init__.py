"""The long-running service (``clawseed-edge run`` / ``gateway``).

:class:`Service` hosts the agent, the input events of the wired devices, the gateway when
``[gateway] enabled`` (or ``clawseed-edge gateway``), and the local control socket
(``$CLAWSEED_HOME/control.sock``) through which ``pair``, ``status``, ``estop`` and ``reload``
reach it. Signals lead to the safe state: SIGTERM/SIGINT/SIGHUP apply it and shut down in order,
SIGUSR1 applies it and keeps running. Under systemd it notifies readiness and pings the watchdog
(:mod:`.notify`); ``clawseed-edge service install`` writes its unit (:mod:`.unit`, :mod:`.install`).
"""

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face as _lazy_face

if TYPE_CHECKING:
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

# Each name from its module on first use: `status` or `estop` needs the control client only,
# not the service (and the service's start-up reaches its gateway's door sooner).
_LAZY = {
    **dict.fromkeys(
        (
            "ControlError",
            "ControlServer",
            "ControlStream",
            "control_path",
            "control_request",
            "control_stream",
            "find_control_socket",
            "stream_answer",
        ),
        ".control",
    ),
    "Service": ".process",
    "ServiceOptions": ".process",
}
__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
