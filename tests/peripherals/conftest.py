"""Shared wiring snippets for the peripherals tests."""

from __future__ import annotations

WIRING = """
[[devices]]
name = "red_led"
pin = "GPIO17"
kind = "led"

[[devices]]
name = "lamp"
pin = "GPIO18"
kind = "pwm_led"
max_level = 0.5

[[devices]]
name = "fan"
pin = "GPIO23"
kind = "relay"
active_high = false
approval = true
max_switches_per_minute = 6

[[devices]]
name = "doorbell"
pin = "GPIO27"
kind = "button"
on_press = "the doorbell button was pressed"
events_per_minute = 2

[[devices]]
name = "arm"
pin = "GPIO12"
kind = "servo"
max_level = 0.8

[[devices]]
name = "pump"
pin = "GPIO24"
kind = "digital_out"
safe = "on"
"""
