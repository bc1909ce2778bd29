"""One SQLite library at idle: without ``[embedding]`` the service imports neither sqlean nor
sqlite-vec (issue 28 item 3); with one, vector recall still loads them.

Checked in a fresh interpreter (``sys.modules`` is per process). The embedding provider points
at a closed port: opening memory asks it nothing (its dimension is learnt at the first store).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.memory.connect import STDLIB_LOADS_EXTENSIONS
from tests.service.fresh import closed_port, run_script

SCRIPT = """
import asyncio, json, sys

from clawseed_edge.config.file import load_config
from clawseed_edge.service.process import Service, ServiceOptions

async def main():
    service = Service(load_config(sys.argv[1]), ServiceOptions(sim=True, say=lambda line: None))
    await service.start()
    memory = service.runtime.memory
    result = {
        "modules": [m for m in ("sqlean", "sqlite_vec") if m in sys.modules],
        "driver": memory.driver,
        "vectors": memory.vectors_loaded,
        "state_driver": service.state_db.driver,
    }
    await service.aclose()
    print(json.dumps(result))

asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("embedding", "gateway"),
    [(False, False), (False, True), (True, False)],
    ids=["run-sim", "gateway", "with-embedding"],
)
def test_sqlean_and_sqlite_vec_load_only_for_an_embedder(
    tmp_path: Path, embedding: bool, gateway: bool
) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}"
    text = f'[provider]\nname = "ollama"\nmodel = "qwen2.5:3b"\nbase_url = "{url}"\n'
    text += "[gateway]\nenabled = true\nport = 0\n" if gateway else "[gateway]\nenabled = false\n"
    if embedding:
        text += f'[embedding]\nname = "ollama"\nmodel = "nomic-embed-text"\nbase_url = "{url}"\n'
    result, _ = run_script(SCRIPT, text, tmp_path)
    assert result["state_driver"] == "sqlite3"
    if not embedding:
        assert result == {
            "modules": [], "driver": "sqlite3", "vectors": False, "state_driver": "sqlite3"
        }  # fmt: skip
    elif STDLIB_LOADS_EXTENSIONS:
        assert (result["modules"], result["driver"], result["vectors"]) == (
            ["sqlite_vec"], "sqlite3", True
        )  # fmt: skip
    else:
        assert (result["modules"], result["driver"], result["vectors"]) == (
            ["sqlean", "sqlite_vec"], "sqlean", True
        )  # fmt: skip
