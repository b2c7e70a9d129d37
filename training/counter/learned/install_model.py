"""Installs a phase net as the one posewatch embeds: one command to replace the model.

    /work/venv-train/bin/python training/counter/learned/install_model.py MODEL_INT8.tflite [--no-fixture]

Checks the model's interface (input float32[1, 45, 27], output float32[1, 3], the window and
features RepetitionPhaseNet expects) with LiteRT, copies it to
Sources/CRepetitionModel/repetition_phase.tflite, rewrites repetition_phase_fingerprint.h beside it
(crepetition_model.c includes that header, so the build re-assembles the `.incbin` when the model
changes, as training/train.py does for the classifier), and regenerates the Swift parity fixture
(make_swift_fixture.py): the fixture's outputs are the new model's, so the Swift tests check the
model that ships. Then: `swift build` and `swift test --filter RepetitionPhase`.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TARGET = os.path.join(ROOT, "Sources", "CRepetitionModel", "repetition_phase.tflite")
HEADER = os.path.join(ROOT, "Sources", "CRepetitionModel", "repetition_phase_fingerprint.h")
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


def write_fingerprint(digest):
    text = open(HEADER).read()
    lines = [l for l in text.splitlines() if not l.startswith("#define POSEWATCH_REPETITION_PHASE_SHA256 ")]
    lines.append(f'#define POSEWATCH_REPETITION_PHASE_SHA256 "{digest}"')
    with open(HEADER, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="the int8 phase net (export.py's model_int8.tflite)")
    ap.add_argument("--no-fixture", action="store_true", help="do not regenerate the Swift parity fixture")
    a = ap.parse_args()
    if not os.path.isfile(a.model):
        sys.exit(f"install_model: {a.model}: no such file")
    check_interface(a.model)
    blob = open(a.model, "rb").read()
    digest = hashlib.sha256(blob).hexdigest()
    if os.path.abspath(a.model) != TARGET:
        shutil.copyfile(a.model, TARGET)
    write_fingerprint(digest)
    print(f"installed: {os.path.relpath(TARGET, ROOT)} {len(blob)} bytes sha256 {digest}")
    if not a.no_fixture:
        subprocess.run([sys.executable, os.path.join(HERE, "make_swift_fixture.py")], check=True)


if __name__ == "__main__":
    main()
