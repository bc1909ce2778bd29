"""``[[sensors]]``, ``[[displays]]`` and ``[i2c]``: what is wired to the buses, validated.

::

    [[sensors]]
    name = "greenhouse"
    driver = "bme280"
    bus = 1
    address = 0x76

    [[sensors]]
    name = "soil"
    driver = "ds18b20"
    device = "28-0316a2791eff"   # optional when only one is present

    [[displays]]
    name = "lcd"
    driver = "hd44780"
    address = 0x27

    [i2c]
    raw_access = false           # i2c_read_register / i2c_write_register tools

:func:`validate_sensors` checks every entry against the driver registry and the board, with
messages that name the file, the key and what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from clawseed_edge.api import ConfigInvalid

if TYPE_CHECKING:  # the filters and drivers are imported when a sensor is validated or built
    from .filters import FilterChain
    from .registry import DriverRegistry

__all__ = [
    "ADDRESS_RANGE",
    "MAX_UPDATE_INTERVAL_S",
    "I2CSettings",
    "SensorConfig",
    "ValidSensor",
    "gather_quantity_filters",
    "parse_sensor_tables",
    "validate_sensors",
    "where",
]

#: The longest update interval (a day); the shortest is ``MIN_UPDATE_INTERVAL_S``.
MAX_UPDATE_INTERVAL_S = 86400.0
MIN_UPDATE_INTERVAL_S = 0.1

ADDRESS_RANGE = range(0x03, 0x78)
"""Valid 7-bit addresses: 0x00-0x02 and 0x78-0x7F are reserved by the I2C specification."""


class SensorConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """One sensor (or display) the user wired.

    Attributes:
        name: What the user and the model call it (``greenhouse``); a Python-style identifier.
        driver: A driver name (``bme280``, ``sht31``, ``bh1750``, ``ads1115``, ``ds18b20``,
            ``dht22``, ``dht11``; ``hd44780`` or ``ssd1306`` for displays) or a plugin's.
        bus: For I2C: N of ``/dev/i2c-N`` (1 is the Pi header's pins 3 and 5).
        address: For I2C: the 7-bit address; default: the chip's usual one.
        device: For sysfs sensors: ``28-<serial>`` (DS18B20) or ``iio:deviceN`` (DHT);
            optional when only one such sensor is present.
        description: Free text for the model (``"in the greenhouse, by the door"``).
        min_interval_s: Serve the last reading for this many seconds (at least the driver's
            own minimum, e.g. 2 s for a DHT22).
        options: Keyword arguments for the driver (``full_scale = 2.048`` for an ADS1115,
            ``columns = 20``, ``rows = 4`` for an LCD, ``height = 32`` for an OLED).
        update_interval: How often the service samples it (``"60s"``, ``"5min"``, ``"1h"``,
            seconds as a number), or ``"never"``: read only when asked. The filtered values
            go to the history.
        filters: ESPHome's sensor filters, applied to every quantity in order, e.g.
            ``[{ median = {} }, { offset = -0.4 }, { delta = 0.1 }]`` (docs/sensors.md). On a
            sensor with several quantities only filters without a unit (smoothing, timing,
            ``delta`` in %) may be here; ``offset`` and the like go per quantity.
        quantity_filters: Written ``filters_<quantity> = [...]`` (``filters_temperature``):
            that quantity's filters instead of ``filters``.
        stale_after: With no new reading for this many ``update_interval``s (default 3),
            the sensor is unknown to automations (as after a failed read).
    """

    name: str
    driver: str
    bus: int = 1
    address: int | None = None
    device: str | None = None
    description: str = ""
    min_interval_s: float | None = None
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    update_interval: str | int = "60s"
    filters: list[dict[str, Any]] = msgspec.field(default_factory=list)
    quantity_filters: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    stale_after: float = 3.0


class I2CSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, frozen=True):
    """``[i2c]``: bus-wide settings.

    Attributes:
        raw_access: Offer ``i2c_read_register`` and ``i2c_write_register`` (a write is risk
            class ``dangerous``: approval in supervised mode, refused in read_only).
        attempts: Tries per operation for NACKs and transient bus errors.
    """

    raw_access: bool = False
    attempts: int = 3


class ValidSensor(msgspec.Struct, frozen=True):
    """A validated entry with its driver class and its resolved address."""

    config: SensorConfig
    driver: type[Any]
    address: int | None
    display: bool
    key: str
    #: Seconds between samples by the service; None: "never" (or a display).
    interval_s: float | None = None

    def chains(self) -> dict[str, FilterChain]:
        """A new filter chain per quantity (filters keep state: one set per sampler)."""
        from .filter_config import build_chain

        out = {}
        cfg = self.config
        for q in self.driver.quantities:
            entries = cfg.quantity_filters.get(q.name, cfg.filters)
            out[q.name] = build_chain(entries, decimals=q.decimals)
        return out

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def transport(self) -> str:
        return str(self.driver.transport)

    @property
    def min_interval_s(self) -> float:
        own = float(getattr(self.driver, "min_interval_s", 0.0))
        wanted = self.config.min_interval_s
        return own if wanted is None else max(own, wanted)


def validate_sensors(
    sensors: Sequence[SensorConfig],
    displays: Sequence[SensorConfig],
    registry: DriverRegistry,
    *,
    taken_names: Sequence[str] = (),
    i2c_pins_in_use: dict[str, str] | None = None,
    source: str = "config.toml",
) -> list[ValidSensor]:
    """Check the sensors and displays; resolve drivers and default addresses.

    Args:
        sensors: ``[[sensors]]`` entries.
        displays: ``[[displays]]`` entries.
        registry: Where driver names are looked up.
        taken_names: Names already used by other devices (GPIO devices).
        i2c_pins_in_use: Board pins with I2C capability that GPIO devices use, pin -> device;
            an error when an I2C sensor is on bus 1 (those pins are its SDA/SCL).
        source: The config file, for messages.

    Raises:
        ConfigInvalid: Unknown driver (lists them), a display under [[sensors]] or the
            reverse, an address outside 0x03-0x77, two devices on one bus address, I2C pins
            used as GPIO, a duplicate name, a negative interval.
    """
    valid: list[ValidSensor] = []
    names = {n: "a GPIO device" for n in taken_names}
    addresses: dict[tuple[int, int], str] = {}
    entries = [("sensors", i, s) for i, s in enumerate(sensors)]
    entries += [("displays", i, d) for i, d in enumerate(displays)]
    for table, i, entry in entries:
        key = f"{table}[{i}]"

        def bad(
            field: str, message: str, key: str = key, entry: SensorConfig = entry
        ) -> ConfigInvalid:
            return ConfigInvalid(f"{entry.name!r}: {message}", file=source, key=f"{key}.{field}")

        if not entry.name.isidentifier() or len(entry.name) > 40:
            raise bad(
                "name", "a name is letters, digits and '_' (not starting with a digit), <= 40"
            )
        if entry.name in names:
            raise bad("name", f"the name is already used by {names[entry.name]}; names are unique")
        names[entry.name] = key
        try:
            driver = registry.get(entry.driver)
        except ConfigInvalid as exc:
            message = str(exc).removeprefix("driver: ")
            raise ConfigInvalid(message, file=source, key=f"{key}.driver") from exc
        is_display = hasattr(driver, "show")
        if is_display and table == "sensors":
            raise bad("driver", f"{entry.driver} is a display: put it under [[displays]]")
        if not is_display and table == "displays":
            raise bad("driver", f"{entry.driver} is a sensor: put it under [[sensors]]")
        if entry.min_interval_s is not None and not 0 <= entry.min_interval_s <= 3600:
            raise bad("min_interval_s", "must be 0..3600 seconds")
        if isinstance(entry.stale_after, bool) or not 1.0 < entry.stale_after <= 100.0:
            raise bad("stale_after", "a number of update_intervals above 1 and up to 100 (3)")
        address: int | None = None
        if driver.transport == "i2c":
            known = tuple(getattr(driver, "addresses", ()))
            address = entry.address if entry.address is not None else (known[0] if known else None)
            if address is None:
                raise bad("address", f"{entry.driver} has no default address; set address = 0x..")
            if address not in ADDRESS_RANGE:
                raise bad(
                    "address",
                    f"address 0x{address:02x} is outside 0x03-0x77 (the 7-bit range I2C allows); "
                    f"{entry.driver} answers at {_hexes(known)}",
                )
            if not 0 <= entry.bus <= 255:
                raise bad("bus", f"bus {entry.bus} is not a bus number (N of /dev/i2c-N)")
            other = addresses.get((entry.bus, address))
            if other is not None:
                raise bad(
                    "address",
                    f"address 0x{address:02x} on bus {entry.bus} is already used by {other}: two "
                    "chips cannot share an address on one bus (change a strap, or use another bus)",
                )
            addresses[(entry.bus, address)] = repr(entry.name)
            if entry.bus == 1 and i2c_pins_in_use:
                pins = ", ".join(f"{p} ({d})" for p, d in i2c_pins_in_use.items())
                raise bad(
                    "bus",
                    f"I2C bus 1 uses SDA/SCL, and GPIO devices are wired to them: {pins}; move "
                    "those devices to other pins",
                )
        elif entry.address is not None:
            raise bad("address", f'{entry.driver} is not an I2C chip: use device = "..." if needed')
        interval = None if is_display else _interval(entry, bad)
        if not is_display:
            _check_filters(entry, driver, bad)
        valid.append(ValidSensor(entry, driver, address, is_display, key, interval))
    return valid


def _interval(entry: SensorConfig, bad: Callable[[str, str], ConfigInvalid]) -> float | None:
    from .filters import FilterInvalid, parse_seconds

    value = entry.update_interval
    if isinstance(value, str) and value.strip().lower() == "never":
        return None
    try:
        return parse_seconds(
            value, "update_interval", low=MIN_UPDATE_INTERVAL_S, high=MAX_UPDATE_INTERVAL_S
        )
    except FilterInvalid as exc:
        raise bad("update_interval", f"{exc}, or 'never' (read only when asked)") from None


def _check_filters(
    entry: SensorConfig, driver: Any, bad: Callable[[str, str], ConfigInvalid]
) -> None:
    from .filter_config import build_chain
    from .filters import FilterInvalid

    decimals = {q.name: q.decimals for q in driver.quantities}
    for quantity in entry.quantity_filters:
        if quantity not in decimals:
            raise bad(
                f"filters_{quantity}",
                f"{entry.driver} measures {', '.join(decimals)}, not {quantity!r}",
            )
    if len(decimals) > 1:
        _check_shared_filters(entry, list(decimals), bad)
    lists = [("filters", entry.filters, min(decimals.values(), default=1))]
    lists += [(f"filters_{q}", f, decimals[q]) for q, f in entry.quantity_filters.items()]
    for field, entries, digits in lists:
        try:
            build_chain(entries, decimals=digits)
        except FilterInvalid as exc:
            raise bad(f"{field}{exc.key}", f"{exc} (see docs/sensors.md, Filters)") from None


def _check_shared_filters(
    entry: SensorConfig, quantities: list[str], bad: Callable[[str, str], ConfigInvalid]
) -> None:
    """The rule for ``filters`` on a sensor with several quantities (a BME280): smoothing and
    timing (median, throttle, delta in %) apply to each; a filter in one quantity's unit
    (offset, calibrate_linear, clamp, delta = 0.5 ...) is refused there, naming the key to
    move it to, because -0.4 degrees is not -0.4 hPa."""
    from .filter_config import in_units

    for i, f in enumerate(entry.filters):
        found = in_units(f)
        if found:
            raise bad(
                f"filters[{i}]",
                f"{found!r} is in one quantity's unit, and {entry.name} ({entry.driver}) measures "
                f"{', '.join(quantities)}: move it to filters_{quantities[0]} = [...] (or "
                "the quantity it is for); smoothing and timing filters may stay in filters",
            )


def where(v: ValidSensor) -> str:
    """Where a sensor is, in words: ``on I2C bus 1 at 0x76``, ``on 1-Wire (28-...)``."""
    device = f" ({v.config.device})" if v.config.device else ""
    if v.transport == "i2c":
        return f"on I2C bus {v.config.bus} at 0x{v.address:02x}"
    if v.transport == "w1":
        return f"on 1-Wire{device}"
    return f"through the kernel's dht11 driver{device}"


def _hexes(addresses: Sequence[int]) -> str:
    return ", ".join(f"0x{a:02x}" for a in addresses) or "an address you must set"


def parse_sensor_tables(
    data: Mapping[str, Any], source: str = "config.toml"
) -> tuple[list[SensorConfig], list[SensorConfig], I2CSettings]:
    """``[[sensors]]``, ``[[displays]]`` and ``[i2c]`` from a decoded TOML document.

    Raises:
        ConfigInvalid: A key is unknown or of the wrong type (names the file and the key).
    """
    out: list[list[SensorConfig]] = []
    for table in ("sensors", "displays"):
        raw = data.get(table, [])
        if isinstance(raw, list):
            raw = [gather_quantity_filters(e) for e in raw]
        try:
            out.append(msgspec.convert(raw, list[SensorConfig]))
        except msgspec.ValidationError as exc:
            message, key = _explain(exc)
            raise ConfigInvalid(message, file=source, key=f"{table}{key}") from exc
    try:
        settings = msgspec.convert(data.get("i2c", {}), I2CSettings)
    except msgspec.ValidationError as exc:
        message, key = _explain(exc)
        raise ConfigInvalid(message, file=source, key=f"i2c{key}") from exc
    return out[0], out[1], settings


def gather_quantity_filters(entry: Any) -> Any:
    """``filters_<quantity> = [...]`` keys moved into ``quantity_filters``."""
    if not isinstance(entry, Mapping):
        return entry
    out = {k: v for k, v in entry.items() if not k.startswith("filters_")}
    per = {k.removeprefix("filters_"): v for k, v in entry.items() if k.startswith("filters_")}
    if per:
        out["quantity_filters"] = per
    return out


def _explain(exc: msgspec.ValidationError) -> tuple[str, str]:
    """(message, key suffix) from msgspec's ``"... - at `$[0].address`"``."""
    message, _, key = str(exc).partition(" - at `$")
    key = key.rstrip("`")
    if message.startswith("Object contains unknown field `"):
        field = message.split("`")[1]
        key = f"{key}.{field}"
        message = f"unknown key {field!r} (check the spelling; see docs/sensors.md)"
    elif not key and message.startswith("Expected `array`"):
        message = f"{message}: write [[sensors]] / [[displays]] tables"
    return message, key
