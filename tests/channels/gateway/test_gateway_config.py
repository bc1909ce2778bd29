"""The [gateway] table: defaults and validation that names the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.config.file import load_config


def test_defaults_are_loopback_with_pairing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[gateway]\nenabled = true\n", encoding="utf-8")
    gateway = load_config(path).config.gateway
    assert (gateway.host, gateway.port, gateway.allow_public_bind) == ("127.0.0.1", 42617, False)
    assert gateway.require_pairing is True


@pytest.mark.parametrize("line", ["port = 70000", "max_body_bytes = 10", "typo = 1"])
def test_bad_values_are_refused_with_the_key_named(tmp_path: Path, line: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[gateway]\n{line}\n", encoding="utf-8")
    with pytest.raises(ConfigInvalid, match="gateway"):
        load_config(path)
