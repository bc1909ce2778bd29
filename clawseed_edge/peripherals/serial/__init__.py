"""Serial boards: STM32 Nucleos running this repository's MicroPython firmware.

``protocol`` is the JSON-lines protocol as a pure object (bytes in, events out), ``pintable``
writes the firmware's pin table from the board files, ``virtual`` runs the real firmware on
CPython behind a pseudo-terminal. Submodules are imported on use; importing this package costs
nothing.
"""
