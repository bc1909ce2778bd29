"""`clawseed-edge gateway` flags: a port out of range is a usage error, as the config key is."""

from __future__ import annotations

import pytest

from clawseed_edge.cli.main import main


@pytest.mark.parametrize(
    ("port", "said"),
    [
        ("99999", "99999 is out of range: a TCP port is 0-65535"),
        ("-1", "-1 is out of range"),
        ("http", "'http' is not a port number"),
    ],
)
def test_a_port_out_of_range_is_refused_before_anything_starts(
    port: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["gateway", "--sim", "--port", port])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --port: {said}" in err
    assert "Traceback" not in err
