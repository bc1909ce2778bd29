"""The control socket and ``clawseed-edge pair`` against a running service."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import httpx
import pytest

from clawseed_edge.cli.main import main
from clawseed_edge.service import ControlError, control_path, control_request
from clawseed_edge.testing import ScriptedProvider
from tests.channels.gateway.conftest import base_url, running_service


async def test_the_socket_is_owner_only_and_answers_json_lines(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        path = control_path(clawseed_home)
        mode = stat.S_IMODE(path.stat().st_mode)
        status = await control_request(path, "status")
        with pytest.raises(ControlError, match="unknown op"):
            await control_request(path, "format_disk")
        assert service.control is not None
    assert mode == 0o600
    assert "gateway http://127.0.0.1:" in status["summary"]
    assert not path.exists(), "removed at shutdown"


async def test_pair_prints_a_code_that_pairs_and_list_and_revoke_manage_tokens(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running_service(clawseed_home, ScriptedProvider()) as service:
        # The CLI runs its own event loop: run it on a thread while this loop serves.
        code = await asyncio.to_thread(main, ["pair"])
        printed = capsys.readouterr().out
        pairing_code = printed.split("pairing code: ")[1].split()[0]
        async with httpx.AsyncClient(base_url=base_url(service)) as http:
            paired = await http.post(
                "/pair", headers={"X-Pairing-Code": pairing_code, "X-Client-Name": "tablet"}
            )
            token = paired.json()["token"]
            listed_code = await asyncio.to_thread(main, ["pair", "--list"])
            listing = capsys.readouterr().out
            token_id = paired.json()["id"]
            revoked_code = await asyncio.to_thread(main, ["pair", "--revoke", token_id])
            after = await http.get("/api/tools", headers={"Authorization": f"Bearer {token}"})
    assert code == 0 and len(pairing_code) == 6 and pairing_code.isdigit()
    assert paired.status_code == 200
    assert listed_code == 0 and token_id in listing and "tablet" in listing
    assert revoked_code == 0
    assert after.status_code == 401


def test_pair_without_a_running_service_says_how_to_start_one(
    clawseed_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["pair"]) == 1
    err = capsys.readouterr().err
    assert "clawseed-edge gateway" in err
    assert main(["pair", "--list"]) == 0, "listing works on state.db without a service"
    assert "no paired clients" in capsys.readouterr().out


async def test_a_second_service_on_the_same_home_is_refused(clawseed_home: Path) -> None:
    async with running_service(clawseed_home, ScriptedProvider()):
        with pytest.raises(ControlError, match="another clawseed-edge service is running"):
            async with running_service(clawseed_home, ScriptedProvider()):
                pass


async def test_a_streaming_op_exchanges_frames_before_its_answer(tmp_path: Path) -> None:
    from clawseed_edge.service import ControlServer, ControlStream, control_stream, stream_answer

    async def ask_twice(request: dict[str, object], stream: ControlStream) -> dict[str, object]:
        answers = []
        for question in ("first?", "second?"):
            await stream.send({"ask": question})
            answers.append((await stream.receive())["answer"])
        return {"answers": answers}

    path = tmp_path / "control.sock"
    server = ControlServer(path, {}, {"ask_twice": ask_twice})
    await server.start()
    try:
        async with control_stream(path, "ask_twice") as stream:
            questions = []
            while "ok" not in (frame := await stream.receive()):
                questions.append(frame["ask"])
                await stream.send({"answer": len(questions)})
            answer = stream_answer(frame)
        with pytest.raises(ControlError, match="unknown op"):
            async with control_stream(path, "nothing") as stream:
                stream_answer(await stream.receive())
    finally:
        await server.aclose()
    assert questions == ["first?", "second?"]
    assert answer["answers"] == [1, 2]


async def test_a_service_asking_back_a_host_that_went_away_gets_a_refusal() -> None:
    from clawseed_edge.service.control_ops import _asking_back

    class Gone:
        async def send(self, frame: dict[str, object]) -> None:
            pass

        async def receive(self) -> dict[str, object]:
            raise ControlError("the other side closed the control connection")

    class CannotAsk(Gone):
        async def receive(self) -> dict[str, object]:
            return {"answer": None}

    assert await _asking_back(Gone())("Allow it?") is False  # type: ignore[arg-type]
    assert await _asking_back(CannotAsk())("Allow it?") is None  # type: ignore[arg-type]


async def test_state_watchers_are_bounded(clawseed_home: Path) -> None:
    import contextlib

    from clawseed_edge.service import control_stream, stream_answer
    from clawseed_edge.service.control_ops import MAX_MCP_WATCHERS

    async with running_service(clawseed_home, ScriptedProvider()):
        path = control_path(clawseed_home)
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(MAX_MCP_WATCHERS):
                watch = await stack.enter_async_context(control_stream(path, "mcp_watch"))
                assert await watch.receive() == {"watching": True}
            async with control_stream(path, "mcp_watch") as extra:
                with pytest.raises(ControlError, match="already watch"):
                    stream_answer(await extra.receive())
        # The watchers that left are counted out again (once the service saw them go).
        for _ in range(100):
            async with control_stream(path, "mcp_watch") as again:
                first = await again.receive()
            if "ok" not in first:
                break
            await asyncio.sleep(0.05)
    assert first == {"watching": True}


async def test_the_service_stops_with_a_watcher_still_connected(clawseed_home: Path) -> None:
    from clawseed_edge.service import control_stream

    service = running_service(clawseed_home, ScriptedProvider())
    await service.__aenter__()
    watching = control_stream(control_path(clawseed_home), "mcp_watch")
    watch = await watching.__aenter__()
    try:
        assert await watch.receive() == {"watching": True}
        await service.__aexit__(None, None, None)  # returns although the watch is open
        with pytest.raises(ControlError):
            async with asyncio.timeout(30):
                await watch.receive()  # the service closed it
    finally:
        await watching.__aexit__(None, None, None)
