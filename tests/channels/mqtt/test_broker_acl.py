"""Issue 35 item 5: the Mosquitto ACL of docs/fleet.md, and ``doctor``'s check of it.

Debian's mosquitto runs with one account per node and the ACL read from docs/fleet.md. The
check passes there and fails on the same broker without the ACL; under the ACL the fleet still
works (the greenhouse sees the shed's fan) while the greenhouse's account can no longer publish
a description for the shed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawseed_edge.channels.mqtt.acl_check import check_broker_acl
from clawseed_edge.config.doctor import DoctorContext, Machine
from clawseed_edge.config.file import load_config
from clawseed_edge.testing.mqtt import MosquittoBroker, MqttRecorder, require_mosquitto

from .nodes import mqtt_node
from .test_fleet import SHED
from .test_fleet_enums import GREENHOUSE, switch_enum, wait_for

pytest.importorskip("aiomqtt")

DOC = Path(__file__).resolve().parents[3] / "docs" / "fleet.md"
USERS = {"greenhouse": "gh-pass-1", "shed": "shed-pass-2", "homeassistant": "ha-pass-3"}
ACCOUNT = '\nusername = "{user}"\npassword_env = "MQTT_PASSWORD"\n'


def doc_acl() -> str:
    """The ACL file as docs/fleet.md shows it (the first block after its heading)."""
    section = DOC.read_text(encoding="utf-8").split("## A Mosquitto ACL per node", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return block.group(1)


def broker(directory: Path, acl: str | None) -> MosquittoBroker:
    return MosquittoBroker(directory, users=USERS, acl=acl, binary=require_mosquitto())


def context(home: Path, port: int, user: str = "greenhouse") -> DoctorContext:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_text(GREENHOUSE.replace("{port}", str(port)) + ACCOUNT.format(user=user))
    return DoctorContext(Machine(), load_config(path))


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MQTT_PASSWORD", USERS["greenhouse"])


async def test_the_check_passes_with_the_documented_acl_and_fails_without(
    tmp_path: Path,
) -> None:
    with broker(tmp_path / "acl", doc_acl()) as guarded:
        ok = await check_broker_acl(context(tmp_path / "a", guarded.port))
    with broker(tmp_path / "open", None) as open_broker:
        failed = await check_broker_acl(context(tmp_path / "b", open_broker.port))
    assert not isinstance(ok, list) and ok.status == "ok", ok
    assert not isinstance(failed, list) and failed.status == "fail", failed
    assert "other nodes' topics" in failed.summary and "docs/fleet.md" in failed.fix


async def test_under_the_acl_the_fleet_works_and_a_node_cannot_speak_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with broker(tmp_path / "acl", doc_acl()) as guarded:
        gh = mqtt_node(
            tmp_path / "greenhouse", guarded, GREENHOUSE + ACCOUNT.format(user="greenhouse")
        )
        async with MqttRecorder(
            guarded,
            "clawseed/+/description",
            username="homeassistant",
            password=USERS["homeassistant"],
        ) as ha:
            async with gh:
                # The shed's service reads its password from the environment at start.
                monkeypatch.setenv("MQTT_PASSWORD", USERS["shed"])
                shed_config = SHED.replace("{level}", "full") + ACCOUNT.format(user="shed")
                async with mqtt_node(tmp_path / "shed", guarded, shed_config):
                    await wait_for(lambda: "shed.fan" in switch_enum(gh), "shed.fan in the enum")
                    await ha.wait_for("clawseed/shed/description", lambda p: b"fan" in p)
                # The greenhouse's account forges the shed's description: the broker drops it.
                async with MqttRecorder(
                    guarded, "clawseed/none", username="greenhouse", password=USERS["greenhouse"]
                ) as forger:
                    await forger.publish(
                        "clawseed/shed/description", b'{"devices": []}', retain=True
                    )
                    # Then one on its own topic, which the ACL lets through: messages of one
                    # connection arrive in order, so once it is seen the forgery had its chance.
                    await forger.publish("clawseed/greenhouse/description", b'{"marker": 1}')
                    await ha.wait_for("clawseed/greenhouse/description", lambda p: b"marker" in p)
    assert b"fan" in ha.last["clawseed/shed/description"], "the forged description never arrived"
    assert ha.count("clawseed/shed/description") == 1
