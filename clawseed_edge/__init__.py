"""clawseed-edge: a memory-lean asyncio AI-agent runtime for Raspberry Pi-class boards.

The package is layered (imports point down only)::

    cli -> gateway -> config -> agent -> providers | tools | memory | peripherals -> api

Only :mod:`clawseed_edge.api` is imported by everyone, and it uses the standard library only.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
