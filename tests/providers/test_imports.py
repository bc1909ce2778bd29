"""Only the configured provider's SDK is imported (checked in fresh interpreters)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SDKS = ("anthropic", "ollama", "httpx")

PROBE = """
import json, sys
{setup}
print(json.dumps({{m: m in sys.modules for m in {sdks!r}}}))
"""


def loaded(setup: str) -> dict[str, bool]:
    code = PROBE.format(setup=setup, sdks=SDKS)
    env = {"PATH": "", "PYTHONNOUSERSITE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_the_package_loads_no_sdk_and_no_httpx() -> None:
    assert loaded("import clawseed_edge.providers") == dict.fromkeys(SDKS, False)


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (
            "from clawseed_edge.providers import OllamaProvider, ProviderConfig\n"
            "OllamaProvider(ProviderConfig())",
            {"anthropic": False, "ollama": True},
        ),
        (
            "from clawseed_edge.providers import OpenAICompatProvider, ProviderConfig\n"
            "OpenAICompatProvider(ProviderConfig(name='openai'))",
            {"anthropic": False, "ollama": False},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='local'))",
            {"anthropic": False, "ollama": True},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='claude'))",
            {"anthropic": True, "ollama": False},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='groq'))",
            {"anthropic": False, "ollama": False},
        ),
    ],
    ids=["ollama", "openai", "registry-ollama", "registry-anthropic", "registry-openai"],
)
def test_constructing_a_provider_loads_only_its_sdk(setup: str, expected: dict[str, bool]) -> None:
    modules = loaded(setup)
    assert {k: modules[k] for k in expected} == expected
