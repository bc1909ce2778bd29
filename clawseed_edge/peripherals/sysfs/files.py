"""Reading kernel attribute files: bounded, and with a seam for the simulated tree's faults.

A sysfs attribute is at most a page (4096 bytes); we never read more, whatever sits at the
path. :class:`FileReader` is what the sysfs drivers call; the fake tree
(:class:`~.fake.FakeSysfs`) hands them one that can fail a read with an ``errno`` first, as the
kernel's drivers do (the dht11 driver's ``EIO`` after a missed edge), and then performs the same
real read.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Protocol

__all__ = ["MAX_ATTRIBUTE_BYTES", "FileReader", "read_attribute"]

MAX_ATTRIBUTE_BYTES = 4096


class FileReader(Protocol):
    """Reads one attribute file as text; raises ``OSError`` as the kernel reports it."""

    def __call__(self, path: Path) -> str: ...


def read_attribute(path: Path) -> str:
    """The text of one attribute file, at most :data:`MAX_ATTRIBUTE_BYTES` bytes.

    Raises:
        OSError: From the kernel (``EIO`` when a driver's read failed, ``ENOENT`` ...).
        ValueError: The file is longer than an attribute can be (this is not sysfs).
    """
    with open(path, "rb") as f:
        data = f.read(MAX_ATTRIBUTE_BYTES + 1)
    if len(data) > MAX_ATTRIBUTE_BYTES:
        raise OSError(errno.EFBIG, f"{path} is longer than a sysfs attribute", str(path))
    return data.decode("ascii", errors="replace")


def describe_os_error(exc: OSError) -> str:
    """``"Input/output error (EIO)"`` for messages."""
    name = errno.errorcode.get(exc.errno or 0, "?")
    return f"{exc.strerror or os.strerror(exc.errno or 0)} ({name})"
