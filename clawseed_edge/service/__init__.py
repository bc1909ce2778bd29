"""The long-running service (``clawseed-edge run`` / ``gateway``).

:class:`Service` hosts the agent, the input events of the wired devices, the gateway when
``[gateway] enabled`` (or ``clawseed-edge gateway``), and the local control socket
(``$CLAWSEED_HOME/control.sock``) through which ``pair``, ``status`` and ``estop`` reach it.
Signals lead to the safe state: SIGTERM/SIGINT apply it and shut down in order, SIGUSR1 applies
it and keeps running.
"""

from .control import ControlError, ControlServer, control_path, control_request
from .process import Service, ServiceOptions

__all__ = [
    "ControlError",
    "ControlServer",
    "Service",
    "ServiceOptions",
    "control_path",
    "control_request",
]
