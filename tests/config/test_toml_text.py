from __future__ import annotations

import tomllib
from typing import Any

import pytest

from clawseed_edge.config.toml_text import dumps


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def test_round_trip() -> None:
    data = {
        "top": 1,
        "unset": None,
        "a": {"s": 'quote " back \\ nl \n tab \t é', "f": 0.5, "b": True, "l": [1, "x"]},
        "arr": [{"n": 1, "sub": {"k": "v"}, "inline": [{"x": 1, "y": None}]}, {"n": 2}],
        "empty": [],
        "weird key": {"dotted.key": False, "nested": {"deep": -3}},
        "emptytable": {},
    }
    text = dumps(data)
    assert "# unset is unset" in text
    assert tomllib.loads(text) == _drop_none(data)


def test_refuses_other_types() -> None:
    with pytest.raises(TypeError, match="set"):
        dumps({"x": {1, 2}})
