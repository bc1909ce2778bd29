"""ToolRegistry: validation, clashes, replace, sources, filters, cached specs."""

from __future__ import annotations

import pytest

from clawseed_edge.agent.registry import BUILTIN, Mcp, Remote, ToolFilter, ToolRegistry
from clawseed_edge.api import ToolNameClash, ToolNameInvalid

from ._tools import EchoTool


@pytest.mark.parametrize("name", ["", "a" * 65, "has space", "dot.name", "slash/x", "ü", "x\n"])
def test_invalid_names_are_refused_with_the_name(name: str) -> None:
    reg = ToolRegistry()
    with pytest.raises(ToolNameInvalid, match="invalid tool name"):
        reg.register(EchoTool(name))
    assert len(reg) == 0


@pytest.mark.parametrize("name", ["a", "a" * 64, "gpio_write", "mcp-fs_read", "Tool9"])
def test_valid_names_are_accepted(name: str) -> None:
    reg = ToolRegistry()
    assert reg.register(EchoTool(name))
    assert reg.get(name) is not None and name in reg


def test_a_clash_is_an_error_not_an_overwrite() -> None:
    reg = ToolRegistry()
    first = EchoTool("echo")
    reg.register(first)
    with pytest.raises(ToolNameClash, match="already registered"):
        reg.register(EchoTool("echo"))
    assert reg.get("echo") is first


def test_register_or_replace_keeps_position_and_returns_the_old_tool() -> None:
    reg = ToolRegistry()
    a, b, a2 = EchoTool("a"), EchoTool("b"), EchoTool("a")
    reg.register_many([a, b])
    assert reg.register_or_replace(a2) is a
    assert reg.get("a") is a2
    assert reg.names() == ["a", "b"]


def test_register_many_is_all_or_nothing() -> None:
    reg = ToolRegistry()
    reg.register(EchoTool("b"))
    with pytest.raises(ToolNameClash):
        reg.register_many([EchoTool("a"), EchoTool("b")])
    assert reg.names() == ["b"]
    with pytest.raises(ToolNameInvalid):
        reg.register_many([EchoTool("c"), EchoTool("bad name")])
    assert reg.names() == ["b"]


def test_shared_instance_in_two_registries_and_idempotent_reregistration() -> None:
    shared = EchoTool("memory_recall")
    r1, r2 = ToolRegistry(), ToolRegistry(denied=["x*"])
    r1.register(shared)
    r2.register(shared)
    assert r1.register(shared)  # same object, same source: no error
    assert r1.get("memory_recall") is r2.get("memory_recall") is shared
    with pytest.raises(ToolNameClash):
        r1.register(shared, Mcp("fs"))  # same object from another source is a clash


def test_unregister_by_source_removes_only_that_source() -> None:
    reg = ToolRegistry()
    reg.register(EchoTool("local"))
    reg.register_many([EchoTool("fs_read"), EchoTool("fs_write")], Mcp("fs"))
    reg.register(EchoTool("web_get"), Mcp("web"))
    reg.register(EchoTool("phone_camera"), Remote("s1"))
    assert sorted(reg.unregister_by_source(Mcp("fs"))) == ["fs_read", "fs_write"]
    assert reg.names() == ["local", "web_get", "phone_camera"]
    assert reg.unregister_by_source(Remote("s1")) == ["phone_camera"]
    assert reg.unregister_by_source(Remote("s1")) == []
    assert reg.source_of("local") == BUILTIN
    assert reg.source_of("web_get") == Mcp("web")


def test_glob_filters_deny_wins() -> None:
    reg = ToolRegistry(allowed=["gpio_*", "memory_*"], denied=["gpio_flash*"])
    names = ["gpio_write", "gpio_read", "gpio_flash_firmware", "memory_store", "shell"]
    kept = reg.register_many([EchoTool(n) for n in names])
    assert kept == ["gpio_write", "gpio_read", "memory_store"]
    assert sorted(reg.filtered_out) == ["gpio_flash_firmware", "shell"]
    assert "shell" not in reg


def test_deny_only_filter_keeps_everything_else() -> None:
    reg = ToolRegistry(denied=["shell"])
    assert reg.register(EchoTool("file_read"))
    assert not reg.register(EchoTool("shell"))


def test_per_mcp_server_filters_apply_only_to_that_server() -> None:
    reg = ToolRegistry(mcp_filters={"fs": ToolFilter.of(allowed=["fs_read*"])})
    assert reg.register(EchoTool("fs_reader"), Mcp("fs"))
    assert not reg.register(EchoTool("fs_delete"), Mcp("fs"))
    assert reg.register(EchoTool("fs_delete"), Mcp("other"))
    assert reg.register(EchoTool("fs_write"))  # built-ins are not filtered by the server


def test_specs_are_cached_and_invalidated_on_every_write() -> None:
    reg = ToolRegistry()
    reg.register(EchoTool("a"))
    specs = reg.specs()
    assert reg.specs() is specs
    assert [s.name for s in specs] == ["a"]
    v = reg.version
    reg.register(EchoTool("b"))
    assert [s.name for s in reg.specs()] == ["a", "b"] and reg.version > v
    cached = reg.specs()
    reg.unregister("a")
    assert [s.name for s in reg.specs()] == ["b"] and reg.specs() is not cached
    cached = reg.specs()
    reg.register_or_replace(EchoTool("b"))
    assert reg.specs() is not cached


def test_something_that_is_not_a_tool_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not a tool"):
        ToolRegistry().register(object())  # type: ignore[arg-type]


def test_copy_shares_the_tool_objects_with_new_filters() -> None:
    reg = ToolRegistry()
    reg.register_many([EchoTool("a"), EchoTool("b")])
    narrowed = reg.copy(denied=["b"])
    assert narrowed.names() == ["a"] and narrowed.get("a") is reg.get("a")
    assert reg.names() == ["a", "b"]
