#!/usr/bin/env python3
"""posewatch vs LiteRT on one model, same input, same thread count, alternating A/B runs.

Usage (from the package root, after `swift build -c release`):

    python Tests/Benchmarks/compare_litert.py [--threads 1 2] [--rounds 5]
        [--iterations 100] [--warmup 10] [--model ../shared/models/movenet_singlepose_lightning_int8_4.tflite]

Each round runs, in a rotating order, one fresh process per engine:
  - LiteRT with XNNPACK (the default delegate; the nodes it took are printed, litert_delegation.py),
  - LiteRT's built-in optimised kernels without delegates (BUILTIN_WITHOUT_DEFAULT_DELEGATES),
  - `posewatch bench` (preloaded with the malloc-counting shim, so it reports heap allocations).
Every engine gets the same input: byte i = ((i * 2654435761) mod 2^32) >> 24 (posewatch bench's
pattern). Per run: median, p90 and min of the per-invoke latencies; the table shows, per engine, the
median over rounds of each statistic, and the ratios posewatch / LiteRT of the medians.
Needs numpy and ai-edge-litert (a venv with both).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_MODEL = os.path.join(ROOT, "..", "shared", "models", "movenet_singlepose_lightning_int8_4.tflite")


def pattern_input(shape, dtype):
    import numpy as np
    count = int(np.prod(shape))
    i = np.arange(count, dtype=np.uint64)
    values = ((i * 2654435761) & 0xFFFFFFFF) >> 24
    return values.astype(np.uint8).view(np.int8 if dtype == np.int8 else np.uint8).astype(dtype).reshape(shape)


def litert_worker(model, threads, resolver, iterations, warmup):
    """Runs in a child process: prints 'latency ms: median X p90 Y min Z' like posewatch bench."""
    import numpy as np
    from ai_edge_litert import interpreter as litert
    kind = {"xnnpack": litert.OpResolverType.AUTO,
            "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}[resolver]
    interpreter = litert.Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kind)
    interpreter.allocate_tensors()
    import litert_delegation
    print(litert_delegation.report(interpreter)[0])
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], pattern_input(detail["shape"], detail["dtype"]))
    for _ in range(warmup):
        interpreter.invoke()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        interpreter.invoke()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    samples.sort()
    print(f"latency ms: median {samples[len(samples) // 2]:.3f}  p90 {samples[min(len(samples) - 1, len(samples) * 9 // 10)]:.3f}  min {samples[0]:.3f}")


LATENCY = re.compile(r"latency ms: median ([0-9.]+)\s+p90 ([0-9.]+)\s+min ([0-9.]+)")


def malloc_shim():
    out = os.path.join(ROOT, ".build", "malloc-counter")
    library = os.path.join(out, "libpw-malloc-count.so")
    source = os.path.join(ROOT, "Tests", "Support", "malloc-count-preload.c")
    if not os.path.exists(library) or os.path.getmtime(library) < os.path.getmtime(source):
        os.makedirs(out, exist_ok=True)
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"], check=True)
    return library


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--posewatch", default=os.path.join(ROOT, ".build", "release", "posewatch"))
    parser.add_argument("--worker", nargs=2, metavar=("RESOLVER", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        litert_worker(args.model, int(args.worker[1]), args.worker[0], args.iterations, args.warmup)
        return
    if not os.path.exists(args.model):
        sys.exit(f"skipped: {args.model} is absent (the shared models live next to the checkout)")
    if not os.path.exists(args.posewatch):
        sys.exit(f"{args.posewatch} is missing: run `swift build -c release` first")
    env = dict(os.environ, LD_PRELOAD=malloc_shim())
    engines = ["posewatch", "xnnpack", "builtin"]
    print(f"model: {args.model}\nrounds: {args.rounds} × {args.iterations} invokes (+{args.warmup} warm-up), "
          f"engines alternating, one process per run; load average now {os.getloadavg()[0]:.1f}")
    summary = {}
    extras = {}
    for threads in args.threads:
        results = {engine: [] for engine in engines}
        for round_index in range(args.rounds):
            order = engines[round_index % 3:] + engines[:round_index % 3]
            for engine in order:
                if engine == "posewatch":
                    output = run([args.posewatch, "bench", args.model, "--threads", str(threads), "--iterations",
                                  str(args.iterations), "--warmup", str(args.warmup)], env=env)
                    for line in output.splitlines():
                        if line.startswith(("heap allocations", "arena bytes", "peak RSS", "threads:")):
                            extras[(threads, line.split(":")[0])] = line
                else:
                    output = run([sys.executable, __file__, "--model", args.model, "--iterations", str(args.iterations),
                                  "--warmup", str(args.warmup), "--worker", engine, str(threads)])
                    delegation = next(line for line in output.splitlines() if line.startswith("delegated:"))
                    extras[(threads, f"{engine} delegation")] = f"LiteRT {engine}: {delegation}"
                match = LATENCY.search(output)
                results[engine].append(tuple(float(match.group(i)) for i in (1, 2, 3)))
        summary[threads] = {engine: tuple(statistics.median(r[i] for r in runs) for i in range(3))
                            for engine, runs in results.items()}
        spread = {engine: (min(r[0] for r in runs), max(r[0] for r in runs)) for engine, runs in results.items()}
        print(f"\n{threads} thread(s): per-run medians ranged " +
              ", ".join(f"{e} {lo:.2f}–{hi:.2f} ms" for e, (lo, hi) in spread.items()))
        for key in sorted(k for k in extras if k[0] == threads):
            print(("  " if key[1].endswith("delegation") else "  posewatch ") + extras[key])
    names = {"posewatch": "posewatch (InferenceCore)", "xnnpack": "LiteRT + XNNPACK", "builtin": "LiteRT built-in kernels"}
    print("\n| threads | engine | median ms | p90 ms | min ms | posewatch / engine (median) |")
    print("|---|---|---|---|---|---|")
    for threads, engines_summary in summary.items():
        ours = engines_summary["posewatch"][0]
        for engine in engines:
            median, p90, minimum = engines_summary[engine]
            ratio = "—" if engine == "posewatch" else f"{ours / median:.2f}"
            print(f"| {threads} | {names[engine]} | {median:.2f} | {p90:.2f} | {minimum:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
