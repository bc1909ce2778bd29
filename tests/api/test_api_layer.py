"""The api layer: standard library only, complete exports, a coherent error tree."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import clawseed_edge.api as api
from clawseed_edge.api import errors

API_DIR = Path(api.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted(API_DIR.glob("*.py")), ids=lambda p: p.name)
def test_api_imports_only_the_standard_library(path: Path) -> None:
    outside = {m for m in _imported_modules(path) if m not in sys.stdlib_module_names}
    assert outside == set(), f"{path.name} imports non-stdlib modules: {outside}"


def test_every_public_name_is_exported_and_resolves() -> None:
    for module in (
        "channels",
        "errors",
        "events",
        "latch",
        "plugins",
        "protocols",
        "states",
        "types",
    ):
        mod = getattr(api, module)
        public = {
            n
            for n, v in vars(mod).items()
            if not n.startswith("_")
            and getattr(v, "__module__", None) == mod.__name__
            and isinstance(v, type)
        }
        missing = public - set(api.__all__)
        assert not missing, f"api.{module} defines public classes not exported: {missing}"
    for name in api.__all__:
        assert getattr(api, name) is not None


def test_every_error_derives_from_the_root_and_has_a_unique_code() -> None:
    classes = [getattr(errors, n) for n in errors.__all__]
    codes = [c.code for c in classes]
    assert all(issubclass(c, errors.ClawseedError) for c in classes)
    assert len(codes) == len(set(codes)), "error codes must be unique"
    # Every error class appears in the tree drawn in the module docstring.
    doc = errors.__doc__ or ""
    undrawn = [c.__name__ for c in classes if c.__name__ not in doc]
    assert not undrawn, f"errors missing from the docstring tree: {undrawn}"


def test_leaf_errors_also_inherit_the_builtin_they_resemble() -> None:
    assert issubclass(errors.ProviderUnreachable, ConnectionError)
    assert issubclass(errors.ToolTimeout, TimeoutError)
    assert issubclass(errors.PinReserved, ValueError)
    assert issubclass(errors.PolicyRateLimited, PermissionError)
    assert errors.ProviderUnreachable.retryable and not errors.ProviderAuthFailed.retryable


def test_config_invalid_names_file_and_key() -> None:
    err = errors.ConfigInvalid("expected an integer", file="/etc/x.toml", key="provider.timeout_s")
    assert str(err) == "/etc/x.toml: provider.timeout_s: expected an integer"
    assert err.key == "provider.timeout_s"


def test_rate_limited_keeps_retry_after_and_provider() -> None:
    err = errors.ProviderRateLimited("slow down", retry_after=2.5, provider="openai", status=429)
    assert (err.retry_after, err.provider, err.status) == (2.5, "openai", 429)


def test_tool_result_text_for_the_model() -> None:
    assert api.ToolResult.ok("GPIO17 high").as_text() == "GPIO17 high"
    assert api.ToolResult.fail("pin reserved").as_text() == "Error: pin reserved"
    assert api.ToolResult.fail("bad", "partial").as_text() == "Error: bad\npartial"


def test_hook_decisions() -> None:
    call = api.ToolCall("x", {"a": 1}, "c1")
    assert api.HookDecision.proceed().outcome == "continue"
    assert api.HookDecision.modify(call).call is call
    assert api.HookDecision.cancel("no").reason == "no"


def test_turn_events_serialise_to_plain_dicts() -> None:
    call = api.ToolCall("gpio_write", {"device": "red_led", "on": True}, "c1")
    ev = api.ToolResultEvent(call, api.ToolResult.ok("on"), 1.23456)
    assert ev.to_dict() == {
        "type": "tool_result",
        "id": "c1",
        "name": "gpio_write",
        "success": True,
        "output": "on",
        "error": None,
        "duration_ms": 1.235,
    }
    assert api.DoneEvent("hi", api.Usage(3, 4)).to_dict()["usage"]["output_tokens"] == 4


def test_usage_adds() -> None:
    assert api.Usage(1, 2, 3) + api.Usage(10, 20, 30) == api.Usage(11, 22, 33)


def test_base_tool_defaults_satisfy_the_tool_protocol() -> None:
    class Echo(api.BaseTool):
        name = "echo"
        description = "Echo the text."

        async def execute(self, arguments, context):  # type: ignore[no-untyped-def]
            return api.ToolResult.ok(str(arguments.get("text", "")))

    tool = Echo()
    assert isinstance(tool, api.Tool)
    assert tool.spec().name == "echo"
    assert tool.describe_action({}) is None
