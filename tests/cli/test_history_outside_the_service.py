"""First-day surprises outside the service: ``tools list`` says where ``sensor_history`` lives,
``agent`` / ``chat`` offer it once the service's history file exists ("how cold was it
overnight?"), and a provider the config file does not name is said."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from clawseed_edge.api import ToolCall, ToolContext
from clawseed_edge.cli.main import main
from clawseed_edge.service.recorder import HISTORY_FILE
from clawseed_edge.state import HistoryPoint, SensorHistory


def test_tools_list_names_sensor_history_as_the_services(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tools", "list"]) == 0
    out = capsys.readouterr().out
    [line] = [row for row in out.splitlines() if row.startswith("sensor_history")]
    assert " on " in line and "in the service only" in line, line


async def test_agent_and_chat_offer_it_where_the_history_file_exists(clawseed_home: Path) -> None:
    from clawseed_edge.cli.agent_cmd import _job_book
    from clawseed_edge.config.assembly import assemble
    from clawseed_edge.config.file import load_config

    loaded = load_config(None)  # the embedded default: a BME280 sampled every 60 s
    async with await assemble(loaded, sim=True, connect=False) as runtime:
        async with _job_book(runtime):
            assert "sensor_history" not in runtime.agent.registry.names(), "no file, no tool"
    async with await SensorHistory.open(clawseed_home / HISTORY_FILE) as history:
        now = time.time()
        for i, value in enumerate((4.5, 2.0, 6.0)):
            history.record(
                HistoryPoint("greenhouse", "temperature", "°C", now - 600 * (i + 1), value)
            )
        await history.flush()
    async with await assemble(loaded, sim=True, connect=False) as runtime:
        async with _job_book(runtime):
            tool = runtime.agent.registry.get("sensor_history")
            assert tool is not None
            call = ToolCall("sensor_history", {"sensor": "greenhouse", "since": "24h"})
            result = await tool.execute(call.arguments, ToolContext(session_id="t"))
    assert result.success, result.error
    assert "min 2 °C" in result.output, result.output


@pytest.mark.parametrize(
    ("text", "noted"),
    [('[hardware]\nboard = "sim"\n', True), ('[provider]\nname = "ollama"\n', False)],
)
def test_a_default_provider_the_file_does_not_name_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, noted: bool
) -> None:
    from clawseed_edge.cli.common import note_default_provider
    from clawseed_edge.config.file import load_config

    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    note_default_provider(load_config(path))
    err = capsys.readouterr().err
    assert ("has no [provider] table: using the default, a local Ollama" in err) is noted, err
