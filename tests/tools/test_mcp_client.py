"""The MCP client (``[[mcp.servers]]``) against a small MCP server on the SDK (a real child)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawseed_edge.agent.approval import StaticApprover
from clawseed_edge.api import ToolContext
from clawseed_edge.config.assembly import assemble
from clawseed_edge.config.file import load_config
from clawseed_edge.testing import ScriptedProvider

pytest.importorskip("mcp")

SERVER = f"""
[[mcp.servers]]
name = "fake"
command = "{sys.executable}"
args = ["-m", "clawseed_edge.testing.fake_servers.mcp_server"]
timeout_s = 60
max_result_chars = 2000
"""
BASE = """
[provider]
name = "demo"
[autonomy]
level = "{level}"
[memory]
backend = "none"
"""


async def _runtime(tmp_path: Path, extra: str = SERVER, level: str = "full", **kwargs: Any) -> Any:
    path = tmp_path / "config.toml"
    path.write_text(BASE.format(level=level) + extra, encoding="utf-8")
    kwargs.setdefault("approver", StaticApprover(False))
    return await assemble(load_config(path), sim=True, probe_at_start=False, **kwargs)


async def _call(runtime: Any, name: str, **arguments: Any) -> Any:
    from clawseed_edge.agent.tool_run import call_tool

    return await call_tool(runtime.agent, name, arguments, ToolContext(session_id="t"))


async def test_a_turn_calls_a_server_tool_by_its_prefixed_name(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        [ScriptedProvider.call("fake__echo", text="hello"), ScriptedProvider.text("done")]
    )
    async with await _runtime(tmp_path, provider=provider) as runtime:
        registry = runtime.agent.registry
        answer = await runtime.agent.run("say hello through the fake server")
        tool = registry.get("fake__echo")
        source = str(registry.source_of("fake__echo"))
    assert answer == "done"
    assert provider.requests[1].messages[-1].content == "echo: hello"
    assert source == "mcp:fake"
    assert tool.external_content is True
    assert str(tool.risk) == "act"


async def test_supervised_asks_before_a_server_tool_runs(tmp_path: Path) -> None:
    approver = StaticApprover(False)
    async with await _runtime(tmp_path, level="supervised", approver=approver) as runtime:
        result = await _call(runtime, "fake__echo", text="hi")
    assert not result.success
    assert [r.tool for r in approver.requests] == ["fake__echo"]


async def test_a_server_killed_mid_session_is_restarted(tmp_path: Path) -> None:
    async with await _runtime(tmp_path) as runtime:
        first = await _call(runtime, "fake__whoami")
        os.kill(int(first.output), signal.SIGKILL)
        # The first call after the kill may already find it gone (then it waits for the
        # restart), or be cut off mid-flight: then it says so, and the next call is served.
        again = await _call(runtime, "fake__whoami")
        if not again.success:
            assert "went away during whoami" in (again.error or "")
            again = await _call(runtime, "fake__whoami")
        echo = await _call(runtime, "fake__echo", text="still here")
    assert first.success and again.success, again.error
    assert again.output != first.output, "a new server process answers"
    assert echo.output == "echo: still here"


async def test_a_hanging_tool_times_out_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async with await _runtime(tmp_path, SERVER.replace("timeout_s = 60", "timeout_s = 2")) as rt:
        hung = await _call(rt, "fake__hang")
        after = await _call(rt, "fake__echo", text="next")
    assert not hung.success
    assert "did not answer hang within 2 s" in (hung.error or "")
    assert after.output == "echo: next"


async def test_a_huge_result_is_capped_and_a_failing_tool_is_a_failed_result(
    tmp_path: Path,
) -> None:
    async with await _runtime(tmp_path) as runtime:
        result = await _call(runtime, "fake__huge", size=200_000)
        failed = await _call(runtime, "fake__fail")
    assert result.success
    assert len(result.output) <= 2000
    assert "the result had 200000 characters" in result.output
    assert not failed.success and (failed.error or "").startswith("fake__fail: ")


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def _clear_peak() -> None:
    """The peak RSS (VmHWM) starts again from the current RSS."""
    Path("/proc/self/clear_refs").write_text("5")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
async def test_a_30_mb_result_fails_cleanly_with_bounded_memory_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    async with await _runtime(tmp_path) as runtime:
        await _call(runtime, "fake__echo", text="warm up")
        before = _rss_kb("VmRSS")
        _clear_peak()
        huge = await _call(runtime, "fake__huge", size=30_000_000)
        peak = _rss_kb("VmHWM")
        after = await _call(runtime, "fake__echo", text="still here")
    assert not huge.success
    assert "over 1048576 bytes" in (huge.error or "") and "dropped unread" in (huge.error or "")
    # Read in 64 KB chunks and never held past the 1 MiB cap: not the ~10x of parsing 30 MB.
    assert peak - before < 16 * 1024, f"the peak grew by {(peak - before) // 1024} MB"
    assert after.output == "echo: still here", "the stream stayed in step"


async def test_a_server_that_does_not_start_is_logged_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = SERVER + '\n[[mcp.servers]]\nname = "broken"\ncommand = "/nonexistent/mcp-server"\n'
    with caplog.at_level(logging.INFO):
        async with await _runtime(tmp_path, broken) as runtime:
            names = runtime.agent.registry.names()
    assert "fake__echo" in names
    assert not any(n.startswith("broken__") for n in names)
    assert "MCP server 'broken' skipped" in caplog.text
    assert "fake-mcp" in caplog.text and "starting" in caplog.text, "the child's stderr is logged"


async def test_tool_globs_choose_the_server_tools(tmp_path: Path) -> None:
    extra = SERVER + 'tools = ["echo", "h*"]\ndenied = ["hang"]\n'
    async with await _runtime(tmp_path, extra) as runtime:
        names = sorted(n for n in runtime.agent.registry.names() if n.startswith("fake__"))
    assert names == ["fake__echo", "fake__huge"]


async def test_the_child_is_ended_with_the_runtime(tmp_path: Path) -> None:
    async with await _runtime(tmp_path) as runtime:
        pid = int((await _call(runtime, "fake__whoami")).output)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_tools_list_shows_the_server_of_each_mcp_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from clawseed_edge.cli.main import main

    path = tmp_path / "config.toml"
    path.write_text(BASE.format(level="full") + SERVER, encoding="utf-8")
    assert main(["--config", str(path), "tools", "list"]) == 0
    text = capsys.readouterr().out
    assert main(["--config", str(path), "tools", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    line = next(line for line in text.splitlines() if line.startswith("fake__echo"))
    assert "act" in line and "(MCP server fake)" in line
    assert rows["fake__echo"]["source"] == "mcp:fake"
    assert "source" not in rows["system_info"]


async def test_a_url_server_on_a_private_address_is_refused_unless_its_network_is_allowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    extra = '[[mcp.servers]]\nname = "lan"\nurl = "http://127.0.0.1:9/mcp"\nconnect_timeout_s = 5\n'
    with caplog.at_level(logging.INFO):
        async with await _runtime(tmp_path, extra):
            pass
    assert "MCP server 'lan' skipped" in caplog.text
    assert "allowed_networks" in caplog.text and "127.0.0.1" in caplog.text
    caplog.clear()
    allowed = extra + '[tools.http]\nallowed_networks = ["127.0.0.1/32"]\n'
    with caplog.at_level(logging.INFO):
        async with await _runtime(tmp_path, allowed):
            pass
    assert "MCP server 'lan' skipped" in caplog.text, "nothing listens on port 9"
    assert "allowed_networks" not in caplog.text, "the address check let it through"


async def test_doctor_starts_each_server_and_lists_its_tools(tmp_path: Path) -> None:
    from clawseed_edge.config.doctor import check_mcp_servers, make_context

    path = tmp_path / "config.toml"
    broken = '\n[[mcp.servers]]\nname = "broken"\ncommand = "/nonexistent/mcp-server"\n'
    path.write_text(BASE.format(level="full") + SERVER + broken, encoding="utf-8")
    results = await check_mcp_servers(make_context(path))
    assert isinstance(results, list)
    by_name = {r.name: r for r in results}
    assert by_name["mcp fake"].status == "ok" and "fake__echo" in by_name["mcp fake"].summary
    assert by_name["mcp broken"].status == "fail"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def _http_server(port: int, allowed_host: str) -> AsyncIterator[None]:
    """The fake server over streamable HTTP on 127.0.0.1:``port``, accepting only the Host
    ``allowed_host``; until it listens, and stopped after."""
    import asyncio
    import subprocess

    server = "clawseed_edge.testing.fake_servers.mcp_server"
    child = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", server, "--http", str(port), "--allowed-host", allowed_host],
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):  # until it listens (a loaded machine starts it slowly)
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.close()
            break
        yield
    finally:
        child.terminate()
        await asyncio.wait_for(child.wait(), 10)


async def test_a_url_server_is_reached_at_the_checked_address_not_a_later_answer(
    tmp_path: Path,
) -> None:
    from clawseed_edge.config.mcp import McpServerSettings
    from clawseed_edge.tools.mcp_client import McpServerConnection

    port = _free_port()
    # Only the name's Host header is accepted: the pinned request must keep it.
    async with _http_server(port, f"mcp.test:{port}"):
        lookups: list[str] = []

        async def rebinding(host: str, port: int) -> list[str]:
            # First the checked, allowed address; every later answer the metadata address.
            lookups.append(host)
            return ["127.0.0.1"] if len(lookups) == 1 else ["169.254.169.254"]

        settings = McpServerSettings(
            name="lan", url=f"http://mcp.test:{port}/mcp", timeout_s=30, connect_timeout_s=60
        )
        connection = McpServerConnection(settings, ["127.0.0.1/32"], rebinding)
        try:
            tools = await connection.start()
            first = await connection.call("echo", {"text": "one"})
            second = await connection.call("echo", {"text": "two"})
        finally:
            await connection.aclose()
    assert "lan__echo" in {t.name for t in tools}
    assert (first.output, second.output) == ("echo: one", "echo: two"), first.error
    assert lookups == ["mcp.test"], "resolved once; the connections went to that answer"


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
async def test_a_30_mb_result_over_http_fails_cleanly_with_bounded_memory(tmp_path: Path) -> None:
    from clawseed_edge.config.mcp import McpServerSettings
    from clawseed_edge.tools.mcp_client import McpServerConnection

    port = _free_port()
    async with _http_server(port, f"127.0.0.1:{port}"):
        settings = McpServerSettings(
            name="lan", url=f"http://127.0.0.1:{port}/mcp", timeout_s=60, connect_timeout_s=60
        )
        connection = McpServerConnection(settings, ["127.0.0.1/32"])
        try:
            await connection.start()
            await connection.call("echo", {"text": "warm up"})
            before = _rss_kb("VmRSS")
            _clear_peak()
            huge = await connection.call("huge", {"size": 30_000_000})
            peak = _rss_kb("VmHWM")
            after = await connection.call("echo", {"text": "still here"})
        finally:
            await connection.aclose()
    assert not huge.success and "dropped unread" in (huge.error or ""), huge.error
    assert peak - before < 16 * 1024, f"the peak grew by {(peak - before) // 1024} MB"
    assert after.output == "echo: still here"


async def test_the_pinned_transport_keeps_host_and_tls_name_and_refuses_other_origins() -> None:
    import httpx

    from clawseed_edge.tools.destinations import Target
    from clawseed_edge.tools.mcp_client import _PinnedTransport

    seen: list[Any] = []

    def handler(request: Any) -> Any:
        seen.append(request)
        return httpx.Response(200, text="ok")

    target = Target("https://mcp.example/mcp", "https", "mcp.example", 443, ("93.184.215.14",))
    transport = _PinnedTransport(target, httpx.MockTransport(handler), httpx.ConnectError)
    async with httpx.AsyncClient(transport=transport) as client:  # type: ignore[arg-type]
        answer = await client.post("https://mcp.example/mcp", content=b"{}")
        with pytest.raises(httpx.ConnectError, match="another origin"):
            await client.get("https://elsewhere.example/mcp")
    (request,) = seen
    assert answer.text == "ok"
    assert request.url.host == "93.184.215.14"
    assert request.headers["Host"] == "mcp.example"
    assert request.extensions["sni_hostname"] == "mcp.example"
