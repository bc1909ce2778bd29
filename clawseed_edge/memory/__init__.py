"""Memory: SQLite store with hybrid FTS5 + sqlite-vec recall, sessions. Depends on api only.

Public names::

    SqliteMemory   the store (api Memory + SessionStore), ``async with SqliteMemory.open(path)``
    NoneMemory     the stand-in when the database cannot be opened
    MemoryConfig   the ``[memory]`` config table (msgspec Struct)
    open_memory    config -> SqliteMemory, or NoneMemory with the reason logged

Importing this package does not import aiosqlite or sqlite-vec; opening a store does.
"""

from .config import MemoryConfig
from .factory import open_memory
from .none import NoneMemory
from .sqlite import SqliteMemory

__all__ = ["MemoryConfig", "NoneMemory", "SqliteMemory", "open_memory"]
