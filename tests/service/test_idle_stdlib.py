"""An idle service with the scheduler on and the model probed loads neither zoneinfo (a zone is
resolved when a job needs one; a ``[scheduler] timezone`` name is checked when the config loads)
nor the IDNA codec (the probe of an ASCII host name)."""

from __future__ import annotations

from pathlib import Path

from tests.service.fresh import closed_port, run_script

SCRIPT = """
import asyncio, json, sys
from clawseed_edge.config.file import load_config
from clawseed_edge.service.process import Service, ServiceOptions

WATCHED = ("zoneinfo", "encodings.idna", "unicodedata")

async def main():
    service = Service(load_config(sys.argv[1]), ServiceOptions(sim=True, say=lambda line: None))
    await service.start()
    assert service.scheduler is not None, "the scheduler runs"
    await asyncio.wait_for(asyncio.shield(service.runtime.probe_task), 30)
    idle = [m for m in WATCHED if m in sys.modules]
    zone = str(service.scheduler.zone)  # a job needs it: resolved now
    used = [m for m in WATCHED if m in sys.modules]
    await service.aclose()
    print(json.dumps({"idle": idle, "zone": zone, "used": used}))

asyncio.run(main())
"""


def test_idle_service_loads_no_zoneinfo_and_no_idna_codec(tmp_path: Path) -> None:
    # The probe of a closed port is refused; `localhost` is a name to resolve.
    text = f'[provider]\nname = "ollama"\nbase_url = "http://localhost:{closed_port()}"\n'
    result, _ = run_script(SCRIPT, text, tmp_path)
    assert result["idle"] == [], "loaded by an idle service"
    assert result["zone"], "the system's zone"
    assert result["used"] == ["zoneinfo"]
