"""The stable api layer: types, protocols, events and errors. Standard library only.

Everything a plugin author needs is importable from here::

    from clawseed_edge.api import BaseTool, ToolResult, RiskClass
"""

from .channels import *  # noqa: F403
from .channels import __all__ as _channels_all
from .errors import *  # noqa: F403
from .errors import __all__ as _errors_all
from .events import *  # noqa: F403
from .events import __all__ as _events_all
from .latch import *  # noqa: F403
from .latch import __all__ as _latch_all
from .plugins import *  # noqa: F403
from .plugins import __all__ as _plugins_all
from .protocols import *  # noqa: F403
from .protocols import __all__ as _protocols_all
from .remote import *  # noqa: F403
from .remote import __all__ as _remote_all
from .states import *  # noqa: F403
from .states import __all__ as _states_all
from .types import *  # noqa: F403
from .types import __all__ as _types_all
from .urls import *  # noqa: F403
from .urls import __all__ as _urls_all
from .wording import *  # noqa: F403
from .wording import __all__ as _wording_all

__all__ = sorted(
    {
        *_channels_all,
        *_errors_all,
        *_events_all,
        *_latch_all,
        *_plugins_all,
        *_protocols_all,
        *_remote_all,
        *_states_all,
        *_types_all,
        *_urls_all,
        *_wording_all,
    }
)
