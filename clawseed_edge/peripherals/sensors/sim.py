"""``SensorSimulation``: the hardware behind configured sensors when there is none.

For ``--sim``, the embedded default and tests: every I2C sensor gets its driver's chip model on a
:class:`~clawseed_edge.peripherals.i2c.sim.SimI2CBus`, every sysfs sensor a directory in a
:class:`~clawseed_edge.peripherals.sysfs.FakeSysfs` tree in a temporary directory. The sensors'
drivers then run unchanged. Readings are set by sensor name::

    bank.sim.sensor("greenhouse").set(temperature=21.5, humidity=40)
"""

from __future__ import annotations

import inspect
import math
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clawseed_edge.api import ConfigInvalid, DeviceNotFound, ToolArgumentsInvalid

if TYPE_CHECKING:
    from clawseed_edge.peripherals.i2c.sim import SimI2CBus
    from clawseed_edge.peripherals.sysfs import FakeSysfs

    from .config import ValidSensor
    from .registry import DriverRegistry

__all__ = ["SensorSimulation", "check_target", "split_target"]


def split_target(target: str) -> tuple[str, str]:
    """``("greenhouse", "temperature")`` from ``"greenhouse.temperature"``.

    Raises:
        ToolArgumentsInvalid: Not ``SENSOR.QUANTITY``.
    """
    sensor, _, quantity = str(target).partition(".")
    if not sensor or not quantity:
        raise ToolArgumentsInvalid(
            f"{str(target)[:60]!r}: write SENSOR.QUANTITY, e.g. greenhouse.temperature"
        )
    return sensor, quantity


def check_target(target: str, quantity: str, known: list[str], value: object) -> float:
    """``value`` as a float for ``quantity``, one of the sensor's ``known`` quantities.

    Raises:
        ToolArgumentsInvalid: An unknown quantity (the known ones are listed), a value that is
            not a finite number.
    """
    sensor = str(target).partition(".")[0]
    if quantity not in known:
        raise ToolArgumentsInvalid(
            f"{sensor} measures {', '.join(known) or 'nothing'}, not {quantity[:40]!r}"
        )
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ToolArgumentsInvalid(f"{target}: {str(value)[:40]!r} is not a finite number")
    return float(value)


class SensorSimulation:
    """Simulated buses and a fake sysfs tree, with a model per configured sensor.

    Args:
        sysfs_root: Where the fake sysfs tree goes; default: a new temporary directory,
            removed by :meth:`close`.
    """

    def __init__(self, sysfs_root: Path | None = None) -> None:
        self.buses: dict[int, SimI2CBus] = {}
        self._models: dict[str, Any] = {}
        self._sysfs_root = sysfs_root
        self._tempdir: str | None = None
        self._sysfs: FakeSysfs | None = None
        self._iio_index = 0

    def bus(self, number: int) -> SimI2CBus:
        """The simulated ``/dev/i2c-<number>`` (made on first use)."""
        from clawseed_edge.peripherals.i2c.sim import SimI2CBus

        if number not in self.buses:
            self.buses[number] = SimI2CBus(number)
        return self.buses[number]

    @property
    def sysfs(self) -> FakeSysfs:
        """The fake sysfs tree (made on first use)."""
        from clawseed_edge.peripherals.sysfs import FakeSysfs

        if self._sysfs is None:
            root = self._sysfs_root
            if root is None:
                self._tempdir = tempfile.mkdtemp(prefix="clawseed-sysfs-")
                root = Path(self._tempdir)
            self._sysfs = FakeSysfs(root)
        return self._sysfs

    def sensor(self, name: str) -> Any:
        """The model of sensor ``name``: ``.set(temperature=...)`` changes what it measures.

        Raises:
            DeviceNotFound: No simulated sensor of that name (the known ones are listed).
        """
        try:
            return self._models[name]
        except KeyError:
            known = ", ".join(self._models) or "none"
            raise DeviceNotFound(f"no simulated sensor {name!r}; simulated: {known}") from None

    def add(self, sensor: ValidSensor, registry: DriverRegistry) -> Any:
        """Create the model of ``sensor`` where its driver will look for it; returns the model.

        Raises:
            ConfigInvalid: The driver has no simulated model (a plugin without one).
        """
        cfg = sensor.config
        if sensor.transport == "i2c":
            factory = registry.sim_model(cfg.driver)
            if factory is None:
                raise ConfigInvalid(
                    f"{cfg.name!r}: driver {cfg.driver} has no simulated model, so it cannot run "
                    "with --sim; give its class a sim_model, or run on hardware",
                    key=f"{sensor.key}.driver",
                )
            # A display's model takes the geometry options its panel has (columns/rows of an
            # LCD, width/height of an OLED); the driver alone judges the rest.
            accepted = inspect.signature(factory).parameters
            options = {k: v for k, v in cfg.options.items() if k in accepted}
            model = factory(**options) if sensor.display else factory()
            assert sensor.address is not None
            self.bus(cfg.bus).attach(sensor.address, model)
        elif sensor.transport == "w1":
            serial = (cfg.device or "28-0316a2791eff").removeprefix("28-")
            model = self.sysfs.add_ds18b20(serial)
        else:
            index = self._iio_index
            if cfg.device and cfg.device.startswith("iio:device"):
                index = int(cfg.device.removeprefix("iio:device") or 0)
            self._iio_index = max(self._iio_index, index) + 1
            model = self.sysfs.add_dht(index)
        self._models[cfg.name] = model
        return model

    def close(self) -> None:
        """Remove the temporary sysfs tree. Idempotent."""
        tempdir, self._tempdir = self._tempdir, None
        if tempdir is not None:
            shutil.rmtree(tempdir, ignore_errors=True)
