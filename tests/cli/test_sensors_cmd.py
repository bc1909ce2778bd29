"""``clawseed-edge sensors history NAME``: an unknown sensor, a sensor with no history yet,
and one with stored points (seeded through the real history store)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.service.recorder import HISTORY_FILE
from clawseed_edge.state import HistoryPoint, SensorHistory

CONFIG = """
[provider]
name = "demo"
[[sensors]]
name = "greenhouse"
driver = "ds18b20"
update_interval = "60s"
[[sensors]]
name = "shed"
driver = "dht22"
update_interval = "never"
"""


@pytest.fixture
def config(clawseed_home: Path) -> str:
    path = clawseed_home / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


def seed(home: Path, sensor: str = "greenhouse", values: tuple[float, ...] = (20.0, 21.5)) -> None:
    async def write() -> None:
        async with await SensorHistory.open(home / HISTORY_FILE) as history:
            now = time.time()
            for i, v in enumerate(values):
                history.record(HistoryPoint(sensor, "temperature", "°C", now - 60 * (i + 1), v))
            await history.flush()

    asyncio.run(write())


def test_an_unknown_sensor_is_named_with_the_configured_ones(
    config: str, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(clawseed_home)
    assert main(["--config", config, "sensors", "history", "greenhous"]) == 1
    err = capsys.readouterr().err
    assert "no sensor named 'greenhous'; configured sensors: greenhouse, shed" in err
    assert "see `clawseed-edge sensors list`" in err
    assert "no history yet" not in err


def test_an_unknown_sensor_without_any_history_file(
    config: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", config, "sensors", "history", "attic"]) == 1
    assert (
        "no sensor named 'attic'; configured sensors: greenhouse, shed" in capsys.readouterr().err
    )


def test_a_configured_sensor_with_no_points_says_no_history_yet(
    config: str, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No history file at all: the sampled sensor is waiting for the service.
    assert main(["--config", config, "sensors", "history", "greenhouse"]) == 1
    err = capsys.readouterr().err
    assert "no history yet for 'greenhouse'" in err and "every 60s" in err
    assert "no sensor named" not in err
    # A history file holding another sensor; this one is read only on demand.
    seed(clawseed_home)
    assert main(["--config", config, "sensors", "history", "shed"]) == 1
    err = capsys.readouterr().err
    assert "no history yet for 'shed'" in err and "update_interval" in err


def test_stored_points_are_shown_and_a_removed_sensor_keeps_its_history(
    config: str, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(clawseed_home)
    seed(clawseed_home, "old_probe", (5.0,))
    assert main(["--config", config, "sensors", "history", "greenhouse", "--since", "1h"]) == 0
    out = capsys.readouterr().out
    assert "21.5" in out and "20" in out
    assert main(["--config", config, "sensors", "history", "old_probe", "--since", "1h"]) == 0
    captured = capsys.readouterr()
    assert "no longer in the config" in captured.err and "5" in captured.out


def test_from_takes_unix_seconds_and_a_year_1_time_is_a_clear_error(
    config: str, clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(clawseed_home)
    since = str(int(time.time()) - 3600)
    assert main(["--config", config, "sensors", "history", "greenhouse", "--from", since]) == 0
    assert "21.5" in capsys.readouterr().out
    args = ["--config", config, "sensors", "history", "greenhouse", "--from", "0001-01-01T00:00"]
    assert main(args) == 2  # a usage error
    err = capsys.readouterr().err
    assert "from: '0001-01-01T00:00' is outside the times history can hold" in err
    assert "Traceback" not in err
