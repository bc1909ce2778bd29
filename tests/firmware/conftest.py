"""Fixtures for the firmware tests: the real firmware core over the simulated machine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clawseed_edge.peripherals.serial.sim_machine import SimBoardState, make_machine, make_pyb
from clawseed_edge.peripherals.serial.virtual import load_firmware


class CoreDriver:
    """The firmware core with request/reply helpers and a settable clock."""

    def __init__(self, board_id: str = "nucleo-f401re", *, machine_pwm: bool = False) -> None:
        modules, table = load_firmware(board_id)
        self.fw = modules["clawseed_core"]
        self.state = SimBoardState()
        machine = make_machine(self.state, machine_pwm=machine_pwm)
        hw = modules["clawseed_hw"].Hardware(machine, make_pyb(self.state, machine))
        self.core = self.fw.Core(hw, table)
        self.now = 1000
        self.next_id = 1
        self.core.tick(self.now)

    def request(self, op: str, **args: Any) -> dict[str, Any]:
        rid = self.next_id
        self.next_id += 1
        line = json.dumps({"id": rid, "op": op, "args": args})
        reply = json.loads(self.core.handle(line))
        assert reply["id"] == rid
        return reply  # type: ignore[no-any-return]

    def ok(self, op: str, **args: Any) -> Any:
        reply = self.request(op, **args)
        assert reply["ok"], reply
        return reply["result"]

    def error(self, op: str, **args: Any) -> str:
        reply = self.request(op, **args)
        assert not reply["ok"], reply
        assert reply["error"]["message"]
        return reply["error"]["code"]  # type: ignore[no-any-return]

    def advance(self, ms: int) -> list[dict[str, Any]]:
        self.now += ms
        return [json.loads(line) for line in self.core.tick(self.now)]


@pytest.fixture(params=["pyb.Timer", "machine.PWM"])
def fw(request: pytest.FixtureRequest) -> CoreDriver:
    """The core on both PWM paths: stm32 MicroPython up to v1.27 (pyb.Timer), and from v1.28."""
    return CoreDriver(machine_pwm=request.param == "machine.PWM")
