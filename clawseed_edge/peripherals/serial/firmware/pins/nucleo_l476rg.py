# Pin table of nucleo-l476rg, generated from its board file by
# `python -m clawseed_edge.peripherals.serial.pintable`; do not edit (a test checks it).
BOARD = "nucleo-l476rg"
HASH = "699186b2bb0a669b"
# name: (capability bits: 1 in, 2 out, 4 pwm, 8 adc; ADC channel or -1; timer; channel)
PINS = {
    "PA0": (15, 5, 5, 1),
    "PA1": (15, 6, 5, 2),
    "PA4": (11, 9, 0, 0),
    "PB0": (15, 15, 3, 3),
    "PC1": (11, 2, 0, 0),
    "PC0": (11, 1, 0, 0),
    "PA3": (3, -1, 0, 0),
    "PA2": (3, -1, 0, 0),
    "PA10": (7, -1, 1, 3),
    "PB3": (7, -1, 2, 2),
    "PB5": (7, -1, 3, 2),
    "PB4": (7, -1, 3, 1),
    "PB10": (7, -1, 2, 3),
    "PA8": (7, -1, 1, 1),
    "PA9": (7, -1, 1, 2),
    "PC7": (7, -1, 8, 2),
    "PB6": (7, -1, 4, 1),
    "PA7": (15, 12, 17, 1),
    "PA6": (15, 11, 16, 1),
    "PA5": (15, 10, 2, 1),
    "PB9": (7, -1, 17, 1),
    "PB8": (7, -1, 16, 1),
    "PC13": (1, -1, 0, 0),
    "PA13": (3, -1, 0, 0),
    "PA14": (3, -1, 0, 0),
}
# header labels and aliases, upper case -> pin
NAMES = {
    "A0": "PA0",
    "A1": "PA1",
    "A2": "PA4",
    "A3": "PB0",
    "A4": "PC1",
    "A5": "PC0",
    "CN7-13": "PA13",
    "CN7-15": "PA14",
    "CN7-23": "PC13",
    "D0": "PA3",
    "D1": "PA2",
    "D10": "PB6",
    "D11": "PA7",
    "D12": "PA6",
    "D13": "PA5",
    "D14": "PB9",
    "D15": "PB8",
    "D2": "PA10",
    "D3": "PB3",
    "D4": "PB5",
    "D5": "PB4",
    "D6": "PB10",
    "D7": "PA8",
    "D8": "PA9",
    "D9": "PC7",
    "LED1": "PA5",
    "USER_BUTTON": "PC13",
}
RESERVED = {
    "PA13": "SWDIO: the debug/flash interface of the ST-LINK",
    "PA14": "SWCLK: the debug/flash interface of the ST-LINK",
    "PA2": "USART2 TX: the ST-LINK virtual COM port the host talks through",
    "PA3": "USART2 RX: the ST-LINK virtual COM port the host talks through",
}
I2C = ("PB9", "PB8")
