"""The simulated I2C bus and its register-level chip models.

The same drivers run on it as on ``/dev/i2c-N``: :class:`SimI2CBus` has the methods of
smbus2's ``SMBus`` that the drivers use.
"""

from .ads1115 import ADS1115Model
from .bh1750 import BH1750Model
from .bme280 import EXAMPLE_TRIMMING, BME280Model
from .bus import ChipModel, RegisterChipModel, SimI2CBus
from .hd44780 import HD44780Model
from .sht31 import SHT31Model
from .ssd1306 import SSD1306Model

__all__ = [
    "EXAMPLE_TRIMMING",
    "ADS1115Model",
    "BH1750Model",
    "BME280Model",
    "ChipModel",
    "HD44780Model",
    "RegisterChipModel",
    "SHT31Model",
    "SSD1306Model",
    "SimI2CBus",
]
