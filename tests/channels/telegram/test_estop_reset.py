"""Telegram and the latched stop: ``/stop`` latches it; ``/reset`` from an allowed user resets
it (switching nothing back on); after that ``/reset`` starts a new conversation again."""

from __future__ import annotations

from pathlib import Path

from clawseed_edge.testing import ScriptedProvider
from clawseed_edge.testing.fake_servers import FakeBotApi
from clawseed_edge.testing.hardware import mock_pin

from .conftest import OWNER, running_bot


async def test_stop_latches_and_reset_from_an_allowed_user_releases_it(
    clawseed_home: Path, bot: FakeBotApi
) -> None:
    provider = ScriptedProvider(
        [
            ScriptedProvider.call("gpio_switch", device="porch_light", on=True),
            "Tried.",
            ScriptedProvider.call("gpio_switch", device="porch_light", on=True),
            "On.",
        ],
        streaming=True,
    )
    async with running_bot(clawseed_home, bot, provider) as service:
        assert service.runtime is not None and service.emergency_stop is not None
        (gpio,) = service.runtime.peripherals
        pin = mock_pin(gpio, "porch_light")
        bot.push_message(OWNER, "/stop")
        await bot.wait_for_message(OWNER, "holds until a paired user sends /reset")
        assert service.emergency_stop.latched
        bot.push_message(OWNER, "light on")
        await bot.wait_for_message(OWNER, "Tried.")
        assert "[estop_latched]" in provider.requests[-1].messages[-1].content
        assert {s.state for s in pin.states} == {0}  # never lit
        bot.push_message(OWNER, "/reset")
        await bot.wait_for_message(OWNER, "Emergency stop reset by Telegram user")
        assert not service.emergency_stop.latched
        assert pin.state == 0  # the reset switched nothing on
        bot.push_message(OWNER, "light on")
        await bot.wait_for_message(OWNER, "On.")
        assert pin.state == 1
        bot.push_message(OWNER, "/reset")
        await bot.wait_for_message(OWNER, "A new conversation starts now.")
