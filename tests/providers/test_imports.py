"""Only the configured provider's SDK is imported (checked in fresh interpreters).

The Ollama provider has none: it speaks the REST API over httpx, and never loads the ``ollama``
package or pydantic even when they are installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid
from clawseed_edge.providers import ProviderConfig, create_provider

SDKS = ("anthropic", "ollama", "pydantic", "httpx")

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
            {"anthropic": False, "ollama": False, "pydantic": False, "httpx": False},
        ),
        (
            "from clawseed_edge.providers import OpenAICompatProvider, ProviderConfig\n"
            "OpenAICompatProvider(ProviderConfig(name='openai'))",
            {"anthropic": False, "ollama": False, "httpx": False},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='local'))",
            {"anthropic": False, "ollama": False, "pydantic": False},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='claude'))",
            {"anthropic": False, "ollama": False},
        ),
        (
            "from clawseed_edge.providers import create_provider, ProviderConfig\n"
            "create_provider(ProviderConfig(name='groq'))",
            {"anthropic": False, "ollama": False},
        ),
    ],
    ids=["ollama", "openai", "registry-ollama", "registry-anthropic", "registry-openai"],
)
def test_constructing_a_provider_loads_no_other_sdk(setup: str, expected: dict[str, bool]) -> None:
    # Not even its own: an idle service pays for an SDK at its first request.
    modules = loaded(setup)
    assert {k: modules[k] for k in expected} == expected


_FIRST_REQUEST = """
import asyncio, json, sys
from clawseed_edge.api import ChatMessage, ChatRequest
from clawseed_edge.providers import create_provider, ProviderConfig

async def main():
    # nothing listens on port 9: every request fails, after loading what it needs
    p = create_provider(ProviderConfig(name={name!r}, base_url="http://127.0.0.1:9",
                                       api_key="k", max_retries=0))
    seen = [{sdk!r} in sys.modules]
    try:
        await p.probe()
    except Exception:
        pass
    seen.append({sdk!r} in sys.modules)
    try:
        await p.chat(ChatRequest([ChatMessage("user", "hi")]))
    except Exception:
        pass
    seen.append({sdk!r} in sys.modules)
    await p.aclose()
    print(json.dumps(seen))

asyncio.run(main())
"""


@pytest.mark.parametrize(
    ("name", "sdk"), [("ollama", "httpx"), ("anthropic", "anthropic"), ("llamacpp", "httpx")]
)
def test_the_sdk_loads_at_the_first_request_not_at_the_probe(name: str, sdk: str) -> None:
    code = _FIRST_REQUEST.format(name=name, sdk=sdk)
    env = {"PATH": "", "PYTHONNOUSERSITE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    constructed, probed, asked = json.loads(out.stdout.strip().splitlines()[-1])
    assert (constructed, probed, asked) == (False, False, True)


def test_the_default_provider_needs_no_sdk_only_the_base_dependencies() -> None:
    # A plain `pip install -e .` must run the default provider (ollama) without an extra: it
    # talks HTTP through httpx, a base dependency, and the `ollama` SDK is no dependency at all.
    import tomllib

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    names = [
        dep.split(">")[0].split("=")[0].split(";")[0].strip() for dep in project["dependencies"]
    ]
    assert "httpx" in names and "ollama" not in names
    # `pip install 'clawseed-edge[ollama]'` still resolves (to nothing more)
    assert project["optional-dependencies"]["ollama"] == []
    assert ProviderConfig().name == "ollama"


def test_the_ollama_provider_runs_without_the_ollama_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ollama", None)  # `import ollama` fails as if not installed
    provider = create_provider(ProviderConfig(name="ollama"))
    assert provider.name == "ollama"


@pytest.mark.parametrize(("name", "sdk"), [("anthropic", "anthropic"), ("claude", "anthropic")])
def test_a_missing_sdk_is_a_one_line_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, name: str, sdk: str
) -> None:
    monkeypatch.setitem(sys.modules, sdk, None)  # makes `import <sdk>` fail as if not installed
    with pytest.raises(ConfigInvalid) as caught:
        create_provider(ProviderConfig(name=name))
    message = str(caught.value)
    assert "\n" not in message
    assert f"pip install 'clawseed-edge[{sdk}]'" in message and "provider.name" in message


def test_a_missing_sdk_through_the_cli_is_one_line_and_no_traceback(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[provider]\nname = "anthropic"\napi_key = "k"\n', encoding="utf-8")
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "from clawseed_edge.cli.main import main\n"
        f"sys.exit(main(['--config', {str(config)!r}, 'agent', '-m', 'hi']))"
    )
    env = {"PATH": "", "PYTHONNOUSERSITE": "1", "CLAWSEED_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "pip install 'clawseed-edge[anthropic]'" in out.stderr
