"""Fake machine trees for board detection and ``doctor``: ``/proc``, ``/sys``, ``/dev``, ``/etc``.

Plain files stand in for device nodes: detection and the doctor read and list, they never
open a device, so the same code runs against these trees as against a Pi's ``/``.
"""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def pi5_tree(root: Path, *, memory_kb: int = 8_245_000) -> Path:
    """A Raspberry Pi 5 with 8 GB: gpiochip0 and 4, i2c-1, 1-Wire not enabled."""
    write(root, "proc/device-tree/model", "Raspberry Pi 5 Model B Rev 1.0\x00")
    write(root, "proc/meminfo", f"MemTotal:       {memory_kb} kB\nMemFree: 1 kB\n")
    for node in ("dev/gpiochip0", "dev/gpiochip4", "dev/i2c-1"):
        write(root, node)
    (root / "sys/bus/usb/devices").mkdir(parents=True, exist_ok=True)
    return root


def nucleo_on_usb(root: Path, name: str = "1-1.2", usb: str = "0483:374b") -> Path:
    """A Nucleo's ST-LINK V2-1 on USB (sysfs device directory and its ttyACM0)."""
    vendor, product = usb.split(":")
    write(root, f"sys/bus/usb/devices/{name}/idVendor", vendor + "\n")
    write(root, f"sys/bus/usb/devices/{name}/idProduct", product + "\n")
    write(root, f"sys/bus/usb/devices/{name}/product", "STM32 STLink\n")
    write(root, f"sys/bus/usb/devices/{name}:1.0/bInterfaceClass", "02\n")  # an interface
    write(root, "dev/ttyACM0")
    return root


def laptop_tree(root: Path) -> Path:
    """A machine that is no Pi: no device-tree model, a USB mouse."""
    write(root, "proc/meminfo", "MemTotal:       16000000 kB\n")
    write(root, "sys/bus/usb/devices/1-1/idVendor", "046d\n")
    write(root, "sys/bus/usb/devices/1-1/idProduct", "c077\n")
    return root
