#!/usr/bin/env python3
"""bench_litert.py MODEL INVOKES: runs MODEL on LiteRT with the XNNPACK delegate (the default
resolver, OpResolverType.AUTO) and 1 thread, INVOKES times, on the input posewatch bench and
Tests/Benchmarks/compare_litert.py use (byte i = ((i x 2654435761) mod 2^32) >> 24).

No clock is read: Tests/Benchmarks/arm64_instructions.sh runs it under qemu-aarch64 with an
instruction-counting plugin at N and 2N invokes, and the difference divided by N is the cost of
one invoke with start-up (Python, numpy, model load, delegate preparation) subtracted.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare_litert import pattern_input  # noqa: E402  (the same input as compare_litert.py)


def main():
    model, invokes = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    from ai_edge_litert import interpreter as litert
    interpreter = litert.Interpreter(model_path=model, num_threads=threads,
                                     experimental_op_resolver_type=litert.OpResolverType.AUTO)
    interpreter.allocate_tensors()
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
