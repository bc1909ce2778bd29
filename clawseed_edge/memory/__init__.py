"""Memory: SQLite store with hybrid FTS5 + sqlite-vec recall, sessions. Depends on api only.

Public names::

    SqliteMemory   the store (api Memory + SessionStore), ``async with SqliteMemory.open(path)``
    NoneMemory     the stand-in when the database cannot be opened
    MemoryConfig   the ``[memory]`` config table (msgspec Struct)
    open_memory    config -> SqliteMemory, or NoneMemory with the reason logged

Importing this package imports only the config table (what loading a config file needs); the
store, sqlite3, aiosqlite and sqlite-vec are imported when first named or opened.
"""

from typing import TYPE_CHECKING

from clawseed_edge.api.lazy import lazy_face as _lazy_face

from .config import MemoryConfig

if TYPE_CHECKING:
    from .factory import open_memory
    from .none import NoneMemory
    from .sqlite import SqliteMemory

__all__ = ["MemoryConfig", "NoneMemory", "SqliteMemory", "open_memory"]

_LAZY = {"NoneMemory": ".none", "SqliteMemory": ".sqlite", "open_memory": ".factory"}
__getattr__, __dir__ = _lazy_face(__name__, _LAZY, __all__)
