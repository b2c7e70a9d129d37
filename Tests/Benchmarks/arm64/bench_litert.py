#!/usr/bin/env python3
"""bench_litert.py MODEL INVOKES [THREADS] [xnnpack|builtin]: runs MODEL on LiteRT, INVOKES times,
on the input posewatch bench and Tests/Benchmarks/compare_litert.py use (byte i = ((i x 2654435761)
mod 2^32) >> 24). `xnnpack` (the default) is the default resolver, OpResolverType.AUTO, which
applies the XNNPACK delegate; `builtin` is BUILTIN_WITHOUT_DEFAULT_DELEGATES, LiteRT's own
optimised kernels, the control run.

It prints the CPU part it reads in /proc/cpuinfo (the file XNNPACK's cpuinfo reads to pick its
micro-kernels) and which nodes the delegate took (litert_delegation.py); with `xnnpack`, a CONV_2D,
DEPTHWISE_CONV_2D or FULLY_CONNECTED node left to LiteRT's own kernels ends it with status 3.

No clock is read: Tests/Benchmarks/arm64_instructions.sh runs it under qemu-aarch64 with an
instruction-counting plugin at N and 2N invokes, and the difference divided by N is the cost of
one invoke with start-up (Python, numpy, model load, delegate preparation) subtracted.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare_litert import pattern_input  # noqa: E402  (the same input as compare_litert.py)
import litert_delegation  # noqa: E402


def main():
    model, invokes = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    resolver = sys.argv[4] if len(sys.argv) > 4 else "xnnpack"
    from ai_edge_litert import interpreter as litert
    kinds = {"xnnpack": litert.OpResolverType.AUTO, "builtin": litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES}
    if resolver not in kinds:
        sys.exit(f"bench_litert: resolver '{resolver}' is neither xnnpack nor builtin")
    interpreter = litert.Interpreter(model_path=model, num_threads=threads, experimental_op_resolver_type=kinds[resolver])
    interpreter.allocate_tensors()
    line, compute_left = litert_delegation.report(interpreter)
    print(f"resolver: {resolver}  cpuinfo: {litert_delegation.cpu_part()}")
    print(line)
    if resolver == "xnnpack" and compute_left:
        print(f"bench_litert: XNNPACK left compute nodes to LiteRT's kernels: {compute_left}", file=sys.stderr)
        sys.exit(3)
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], pattern_input(detail["shape"], detail["dtype"]))
    for _ in range(invokes):
        interpreter.invoke()
    import hashlib
    output = interpreter.get_output_details()[0]
    digest = hashlib.sha256(interpreter.get_tensor(output["index"]).tobytes()).hexdigest()[:16]
    print(f"invokes: {invokes}  output[0] checksum: {digest}")


if __name__ == "__main__":
    main()
