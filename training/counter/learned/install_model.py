"""Installs the phase net posewatch embeds (one model, or two averaged): one command to replace it.

    /work/venv-train/bin/python training/counter/learned/install_model.py M1_INT8.tflite [M2_INT8.tflite] [--no-fixture]

Checks each model's interface (input float32[1, 45, 27], output float32[1, 3], the window and
features RepetitionPhaseNet expects) with LiteRT, copies them to
Sources/CRepetitionModel/repetition_phase_1.tflite (and _2; a stale _2 is removed when one model
is given), rewrites repetition_phase_fingerprint.h beside them (the model count and sha256s;
crepetition_model.c includes that header, so the build re-assembles the `.incbin`s when a model
changes, as training/train.py does for the classifier), and regenerates the Swift parity fixture
(make_swift_fixture.py): the fixture's outputs are the installed ensemble's, so the Swift tests
check what ships. Then: `swift build` and `swift test --filter RepetitionPhase`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
INSTALLED = os.path.join(ROOT, "Sources", "CRepetitionModel")
TARGETS = [os.path.join(INSTALLED, f"repetition_phase_{n}.tflite") for n in (1, 2)]
HEADER = os.path.join(INSTALLED, "repetition_phase_fingerprint.h")
WINDOW, FEATURES, OUTPUTS = 45, 27, 3


def check_interface(path):
    """Refuses (exit 1, one line) a file LiteRT cannot load or whose interface is not the net's."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        from tensorflow.lite import Interpreter
    try:
        it = Interpreter(model_path=path)
        it.allocate_tensors()
    except Exception as e:  # LiteRT raises ValueError / RuntimeError for damaged files
        sys.exit(f"install_model: {path}: not a loadable TFLite model ({e})")
    ins, outs = it.get_input_details(), it.get_output_details()
    def describe(details):
        return ", ".join(f"{d['dtype'].__name__}[{','.join(str(int(n)) for n in d['shape'])}]" for d in details)

    got = (describe(ins), describe(outs))
    want = (f"float32[1,{WINDOW},{FEATURES}]", f"float32[1,{OUTPUTS}]")
    if got != want:
        sys.exit(f"install_model: {path}: inputs {got[0]} and outputs {got[1]}, but posewatch's phase net "
                 f"takes {want[0]} and returns {want[1]}")


def write_fingerprint(digests):
    """The header's comment stays; the count and one sha256 per model are rewritten."""
    text = open(HEADER).read()
    lines = [l for l in text.splitlines() if not l.startswith("#define POSEWATCH_REPETITION_PHASE_")]
    lines.append(f"#define POSEWATCH_REPETITION_PHASE_COUNT {len(digests)}")
    lines += [f'#define POSEWATCH_REPETITION_PHASE_{n}_SHA256 "{d}"' for n, d in enumerate(digests, 1)]
    with open(HEADER, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="one or two int8 phase nets (export.py's model_int8.tflite), averaged in this order")
    ap.add_argument("--no-fixture", action="store_true", help="do not regenerate the Swift parity fixture")
    a = ap.parse_args()
    if len(a.models) > len(TARGETS):
        sys.exit(f"install_model: {len(a.models)} models given, posewatch embeds one or two")
    for path in a.models:
        if not os.path.isfile(path):
            sys.exit(f"install_model: {path}: no such file")
        check_interface(path)
    blobs = [open(path, "rb").read() for path in a.models]  # read all first: a source may be a target
    digests = []
    for blob, target in zip(blobs, TARGETS):
        with open(target, "wb") as f:
            f.write(blob)
        digests.append(hashlib.sha256(blob).hexdigest())
        print(f"installed: {os.path.relpath(target, ROOT)} {len(blob)} bytes sha256 {digests[-1]}")
    for stale in TARGETS[len(blobs):]:
        if os.path.exists(stale):
            os.remove(stale)
            print(f"removed: {os.path.relpath(stale, ROOT)}")
    write_fingerprint(digests)
    if not a.no_fixture:
        subprocess.run([sys.executable, os.path.join(HERE, "make_swift_fixture.py")], check=True)


if __name__ == "__main__":
    main()
