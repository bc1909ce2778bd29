"""RSS and import time of the providers layer with each provider configured.

For each provider (ollama, anthropic, openai) a fresh interpreter imports
``clawseed_edge.providers`` (plus ``--also-import`` modules, e.g. ``clawseed_edge.agent``),
builds that provider through ``create_provider`` and reports its RSS (VmRSS from
/proc/self/status), the time of import + construction, and which SDK modules are loaded (only
the configured provider's SDK may be; SDKs, and httpx for OpenAI-compatible servers, load at
the first request, so none is loaded here). The baseline is a bare interpreter (``pass``) measured in
the same run. Medians of ``--runs`` runs; ratios against the baseline.

Run from the repository root::

    .venv/bin/python benchmarks/bench_provider_imports.py --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

SDKS = ("ollama", "anthropic", "httpx", "httpx2", "pydantic")
EXPECTED_SDK = {"ollama": None, "anthropic": "anthropic", "openai": None}  # ollama: REST over httpx

CHILD = r"""
import json, sys, time

def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

start = time.perf_counter()
provider_name = {provider!r}
if provider_name:
    import importlib
    for extra in {also!r}:
        importlib.import_module(extra)
    from clawseed_edge.providers import ProviderConfig, create_provider
    config = ProviderConfig(name=provider_name, api_key="bench-key", max_retries=0)
    provider = create_provider(config)
elapsed = time.perf_counter() - start
print(json.dumps({{
    "rss_kb": rss_kb(),
    "import_ms": elapsed * 1000,
    "modules": [m for m in {sdks!r} if m in sys.modules],
}}))
"""


def run_child(provider: str, also: list[str]) -> dict[str, object]:
    code = CHILD.format(provider=provider, also=also, sdks=SDKS)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall_ms = (time.perf_counter() - start) * 1000
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_ms"] = wall_ms
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per case (median reported)")
    parser.add_argument(
        "--also-import",
        action="append",
        default=[],
        metavar="MODULE",
        help="also import this module before building the provider (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    cases = ["", "ollama", "anthropic", "openai"]
    samples: dict[str, list[dict[str, object]]] = {c: [] for c in cases}
    for _ in range(args.runs):  # interleaved, so machine noise spreads over every case
        for case in cases:
            samples[case].append(run_child(case, args.also_import))

    def median(case: str, key: str) -> float:
        return statistics.median(float(s[key]) for s in samples[case])  # type: ignore[arg-type]

    base_rss = median("", "rss_kb")
    base_wall = median("", "wall_ms")
    rows = []
    ok = True
    for case in cases:
        modules = sorted({m for s in samples[case] for m in s["modules"]})  # type: ignore[attr-defined]
        expected = EXPECTED_SDK.get(case)
        others = {"ollama", "anthropic"} - ({expected} if expected else set())
        clean = not (others & set(modules))
        ok = ok and clean
        rows.append(
            {
                "case": case or "baseline (pass)",
                "rss_mb": median(case, "rss_kb") / 1024,
                "rss_ratio": median(case, "rss_kb") / base_rss,
                "import_ms": median(case, "import_ms"),
                "wall_ms": median(case, "wall_ms"),
                "wall_ratio": median(case, "wall_ms") / base_wall,
                "modules": modules,
                "only_own_sdk": clean,
            }
        )

    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            f"python {sys.version.split()[0]}, {args.runs} runs each, medians"
            + (f", also importing {', '.join(args.also_import)}" if args.also_import else "")
        )
        print(
            f"{'case':18} {'RSS MB':>8} {'x base':>7} {'import ms':>10} {'wall ms':>8} "
            f"{'x base':>7}  loaded"
        )
        for r in rows:
            print(
                f"{r['case']:18} {r['rss_mb']:8.1f} {r['rss_ratio']:7.2f} "
                f"{r['import_ms']:10.1f} {r['wall_ms']:8.1f} {r['wall_ratio']:7.2f}  "
                f"{', '.join(r['modules']) or '-'}"  # type: ignore[arg-type]
                + ("" if r["only_own_sdk"] else "  <- another provider's SDK loaded!")
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
