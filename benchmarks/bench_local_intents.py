"""The local-intent stage on its corpus: hit rate, wrong-action rate, latency, tools offered.

On the embedded default's simulated board (demo provider, ``full`` autonomy, an approver that
says yes), for the corpus in ``tests/agent/data/local_intents_corpus.json``:

* hit rate: simple commands for which the stage makes exactly the expected calls;
* wrong-action rate: sentences for which the stage makes a write it should not (any write for a
  must-not-act sentence, a different write for a command);
* latency per local turn, median of ``Agent.run()`` with the stage on, against the baseline of
  the same sentences as demo-provider turns (stage off) measured in the same run, interleaved;
  and the stage's own ``plan()`` alone;
* prompt tokens saved by ``[agent] max_tools = 8``: the tool schemas as JSON, estimated at 4
  characters a token, all tools against the ones :func:`select_tools` offers per sentence.

Run: ``python benchmarks/bench_local_intents.py [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from clawseed_edge.agent import StaticApprover
from clawseed_edge.agent.offer import SMALL_MODEL_TOOLS, select_tools
from clawseed_edge.api import ToolSpec
from clawseed_edge.config import assemble_agent

CORPUS = Path(__file__).parents[1] / "tests" / "agent" / "data" / "local_intents_corpus.json"
_READS = ("read", "status", "history")


def load_corpus() -> list[dict[str, Any]]:
    sentences: list[dict[str, Any]] = json.loads(CORPUS.read_text())["sentences"]
    return sentences


def writes(calls: list[list[Any]]) -> list[list[Any]]:
    return [c for c in calls if not any(r in c[0] for r in _READS)]


def rates(stage: Any, specs: tuple[ToolSpec, ...], corpus: list[dict[str, Any]]) -> dict[str, Any]:
    act = [s for s in corpus if s["calls"]]
    hits = wrong = 0
    for sentence in corpus:
        got = [[c.name, dict(c.arguments)] for c in stage.plan(sentence["text"], specs)]
        if sentence["calls"] and got == sentence["calls"]:
            hits += 1
        if writes(got) and writes(got) != writes(sentence["calls"]):
            wrong += 1
    return {
        "sentences": len(corpus),
        "commands": len(act),
        "must_not_act": len(corpus) - len(act),
        "hit_rate": hits / len(act),
        "wrong_action_rate": wrong / len(corpus),
    }


def tokens(specs: tuple[ToolSpec, ...]) -> int:
    text = json.dumps(
        [{"name": s.name, "description": s.description, **s.parameters} for s in specs]
    )
    return len(text) // 4


async def turn_latencies(corpus: list[dict[str, Any]], rounds: int) -> dict[str, float]:
    # Not the fan: its 6 switches a minute (the policy's rate window) would refuse most samples.
    commands = [s["text"] for s in corpus if s["calls"] and "fan" not in json.dumps(s["calls"])]
    local_ms: list[float] = []
    demo_ms: list[float] = []
    plan_us: list[float] = []
    agent = await assemble_agent(None, sim=True, approver=StaticApprover(True))
    async with agent:
        stage = agent.local_intents
        specs = agent.registry.specs()
        sample = 0
        for _ in range(rounds):
            for text in commands:
                for on, sink in ((True, local_ms), (False, demo_ms)):
                    agent.local_intents = stage if on else None
                    sample += 1  # a session each: max_actions_per_hour counts per session
                    start = time.perf_counter()
                    await agent.run(text, session_id=f"bench{sample}")
                    sink.append((time.perf_counter() - start) * 1000.0)
                start = time.perf_counter()
                assert stage is not None
                stage.plan(text, specs)
                plan_us.append((time.perf_counter() - start) * 1e6)
    local, demo = statistics.median(local_ms), statistics.median(demo_ms)
    return {
        "local_turn_ms": local,
        "demo_turn_ms": demo,
        "ratio_local_to_demo": local / demo,
        "plan_only_us": statistics.median(plan_us),
    }


async def main(rounds: int) -> dict[str, Any]:
    corpus = load_corpus()
    agent = await assemble_agent(None, sim=True, approver=StaticApprover(True))
    async with agent:
        specs = agent.registry.specs()
        figures = rates(agent.local_intents, specs, corpus)
    all_tokens = tokens(specs)
    offered = [tokens(select_tools(s["text"], specs, SMALL_MODEL_TOOLS)) for s in corpus]
    figures["tools_all"] = len(specs)
    figures["prompt_tokens_all_tools"] = all_tokens
    figures["prompt_tokens_max_tools_8_median"] = statistics.median(offered)
    figures["prompt_tokens_saved_median"] = all_tokens - statistics.median(offered)
    figures.update(await turn_latencies(corpus, rounds))
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for key, value in asyncio.run(main(args.rounds)).items():
        print(f"{key:36} {value:.3f}" if isinstance(value, float) else f"{key:36} {value}")
