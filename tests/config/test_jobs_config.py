"""``[scheduler]`` and ``[[jobs]]``: strict validation with errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.file import load_config


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_a_valid_job_table_loads(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
[scheduler]
timezone = "Europe/Berlin"
[[jobs]]
name = "soil"
every = "10m"
tool = "sensor_read"
arguments = { sensor = "soil" }
deliver = ["memory"]
missed = "run_once"
""",
    )
    job = loaded.config.jobs[0]  # type: ignore[attr-defined]
    assert (job.name, job.every, job.tool, job.missed) == ("soil", "10m", "sensor_read", "run_once")


@pytest.mark.parametrize(
    ("table", "key", "message"),
    [
        ('name = "a"\ncron = "0 7 * *"\nprompt = "x"', "jobs[0].cron", "five fields"),
        ('name = "a"\nprompt = "x"', "jobs[0].cron", "exactly one schedule"),
        (
            'name = "a"\ncron = "0 7 * * *"\nevery = "1h"\nprompt = "x"',
            "jobs[0].cron",
            "got cron, every",
        ),
        ('name = "a"\nevery = "1h"', "jobs[0].prompt", "exactly one action"),
        ('name = "a"\nevery = "0s"\nprompt = "x"', "jobs[0].every", "outside 1 s"),
        ('name = "a"\nat = "noon"\nprompt = "x"', "jobs[0].at", "ISO 8601"),
        ('name = "a b"\nevery = "1h"\nprompt = "x"', "jobs[0].name", "not a job name"),
        ('name = "a"\nevery = "1h"\nprompt = "x"\nmissed = "later"', "jobs[0].missed", ""),
        ('name = "a"\nevery = "1h"\nprompt = "x"\nwhen = 1', "jobs[0]", "when"),
        (
            'name = "a"\nevery = "1h"\nprompt = "x"\narguments = { a = 1 }',
            "jobs[0].arguments",
            "only a tool job",
        ),
    ],
)
def test_a_bad_job_names_its_key(tmp_path: Path, table: str, key: str, message: str) -> None:
    with pytest.raises(ConfigInvalid) as info:
        load(tmp_path, f"[[jobs]]\n{table}\n")
    assert info.value.key is not None and info.value.key.startswith(key), info.value
    assert message in str(info.value)


def test_an_unknown_time_zone_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalid) as info:
        load(tmp_path, '[scheduler]\ntimezone = "Mars/Olympus"\n')
    assert info.value.key == "scheduler.timezone"
    assert "IANA name such as 'Europe/Berlin'" in str(info.value)
