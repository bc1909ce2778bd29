"""Every built-in tool is in one table: all_tools builds the ones the config turns on, and
builtin_tools describes each (risk, on or off, the key that turns it on). The [tools.http]
keys are validated when the file is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawseed_edge.api import ConfigInvalid, RiskClass
from clawseed_edge.config.file import load_config
from clawseed_edge.config.schema import Config
from clawseed_edge.config.tool_table import all_tools, builtin_tools
from clawseed_edge.memory.none import NoneMemory
from clawseed_edge.tools.http_tools import HttpRequestTool, WebFetchTool

EVERY = [
    "memory_store", "memory_recall", "memory_forget", "file_read", "file_write", "file_list",
    "shell", "system_info", "http_request", "web_fetch",
]  # fmt: skip


def load(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path).config


def test_every_builtin_is_listed_with_its_risk_and_switch() -> None:
    listed = {b.name: b for b in builtin_tools(Config())}
    assert list(listed) == EVERY
    assert listed["shell"].risk is RiskClass.DANGEROUS
    assert listed["http_request"].risk is RiskClass.ACT
    assert (
        listed["web_fetch"].risk is RiskClass.READ and listed["system_info"].risk is RiskClass.READ
    )
    off = {name for name, b in listed.items() if not b.enabled}
    assert off == {"shell", "http_request", "web_fetch"}
    assert listed["memory_store"].key is None and listed["memory_store"].turn_on == ""
    assert listed["web_fetch"].turn_on == (
        "set [tools] web_fetch = true and list the hosts it may reach in [tools.http] "
        "allowed_domains"
    )


def test_all_tools_builds_what_is_on(tmp_path: Path) -> None:
    names = [t.name for t in all_tools(Config(), NoneMemory(), workspace=tmp_path)]
    assert names == [n for n in EVERY if n not in ("shell", "http_request", "web_fetch")]
    config = load(
        tmp_path,
        "[tools]\nshell = true\nfiles = false\nsystem_info = false\nhttp_request = true\n"
        'web_fetch = true\n[tools.http]\nallowed_domains = ["example.com"]\n'
        'methods = ["GET", "POST"]\nmax_output_chars = 1000\n',
    )
    tools = {t.name: t for t in all_tools(config, NoneMemory(), workspace=tmp_path)}
    assert list(tools) == ["memory_store", "memory_recall", "memory_forget", "shell",
                           "http_request", "web_fetch"]  # fmt: skip
    request = tools["http_request"]
    assert isinstance(request, HttpRequestTool) and request.methods == ("GET", "POST")
    assert request.max_output_chars == 1000
    fetch = tools["web_fetch"]
    assert isinstance(fetch, WebFetchTool)
    assert fetch.fetcher.policy.domain_allowed("example.com")
    assert not fetch.fetcher.policy.domain_allowed("example.org")


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("[tools]\nweb_fetch = true\n", "tools.web_fetch", "allowed_domains is empty"),
        ("[tools]\nhttp_request = true\n", "tools.http_request", "allowed_domains is empty"),
        (
            '[tools.http]\nallowed_networks = ["192.168.1.0/33"]\n',
            "tools.http.allowed_networks",
            "'192.168.1.0/33' is not a network",
        ),
        (
            '[tools.http]\nallowed_domains = ["https://example.com/"]\n',
            "tools.http.allowed_domains",
            "is not a host name",
        ),
        ('[tools.http]\nmethods = ["FETCH"]\n', "tools.http.methods", "FETCH"),
        ("[tools.http]\nmethods = []\n", "tools.http.methods", ""),
        ("[tools.http]\nmax_redirects = 11\n", "tools.http.max_redirects", "<= 10"),
        ("[tools.http]\ntimeout_s = 0\n", "tools.http.timeout_s", "> 0"),
        ("[tools.http]\nmax_response_bytes = 10\n", "tools.http.max_response_bytes", ">= 1024"),
        ("[tools.http]\nallow_private = true\n", "tools.http.allow_private", "unknown key"),
    ],
)
def test_bad_http_settings_name_the_key(tmp_path: Path, text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigInvalid) as info:
        load(tmp_path, text)
    assert info.value.key is not None and info.value.key.startswith(key), str(info.value)
    assert words in str(info.value)


def test_ip_literals_are_valid_domains(tmp_path: Path) -> None:
    config = load(tmp_path, '[tools.http]\nallowed_domains = ["192.168.1.20", "::1", "*"]\n')
    assert config.tools.http.allowed_domains == ["192.168.1.20", "::1", "*"]
