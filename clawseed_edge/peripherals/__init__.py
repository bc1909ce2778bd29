"""Peripherals: boards, Pi GPIO through gpiozero, simulation. Depends on api only."""
