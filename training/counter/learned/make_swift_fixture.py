"""Writes the parity fixture the Swift port of the phase net is held to
(Tests/ActionsTests/Fixtures/repetition_phase/, read by RepetitionPhaseParityTests).

    /work/venv-train/bin/python training/counter/learned/make_swift_fixture.py [--model FILE]

Four sequences from fixed seeds (nothing from ../shared): two of gen.make_sequence (one with
posegen's MoveNet-like poses in pixels, one in Countix's min–max normalised form) and two 45 s
stretches of gen_sessions.session_sequence (today's session generator: an empty room, walking in,
sets and pauses; again one of each form). For each, per frame:
  poses     float16[T, 17, 3]  what the Swift features read. Rounded to float16 *before* anything
                               is computed from them (half the size; every value below is the
                               reference's on exactly these poses)
  features  float32[T, 27]     gen.features(poses)
  outputs   float32[T, 3]      the int8 model on evaluate_learned.windows(features, 45), one
                               LiteRT invoke per frame with the reference kernels (BUILTIN_REF),
                               which the inference core equals bit for bit
and in fixture.json the sequences' lengths and count.count(outputs, fps=15, at_phase=0.75,
rel_start=True)'s events (frame indices), the same on a `gated` copy of the outputs (p(repeating)
set to 0 on a fixed schedule, `gated_off`: many more turn-ons, so the counter's restart and credit
replay are compared many times), with the model's sha256 (the Swift test says when the
fixture is older than the embedded model). The model defaults to the one posewatch embeds
(Sources/CRepetitionModel/repetition_phase.tflite); install_model.py runs this after installing.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import count as C  # noqa: E402
import gen  # noqa: E402
import gen_sessions  # noqa: E402

MODEL = os.path.join(ROOT, "Sources", "CRepetitionModel", "repetition_phase.tflite")
OUT = os.path.join(ROOT, "Tests", "ActionsTests", "Fixtures", "repetition_phase")
WINDOW = 45
FPS = 15.0
AT_PHASE = 0.75
SESSION_SECONDS = 45.0


def gated_off(t):
    """Frames on which the gated variant sets p(repeating) to 0: 40-frame gaps (longer than the
    counter's gap: a restart and a credit replay), 8-frame ones (shorter: no restart) and
    15- and 16-frame ones (the gap itself: no restart; one more: a restart)."""
    return (t % 97 < 40) | (t % 53 < 8) | (t % 71 < 15) | (t % 89 < 16)


def windows(x, window):
    """evaluate_learned.windows (imported from there it would pull in the rule-based counter's
    data modules): each frame's last `window` feature rows, zero rows before the start."""
    padded = np.concatenate([np.zeros((window - 1, x.shape[1]), np.float32), x])
    return padded[np.arange(len(x))[:, None] + np.arange(window)[None]]


def generated(seed, countix):
    s = gen.make_sequence(np.random.default_rng(seed), seconds=(30.0, 45.0), countix_share=1.0 if countix else 0.0)
    assert s["countix"] == countix
    return s["poses"]


def session(seed, countix):
    """45 s of a session from 8 s before its first set (an empty room and walking in come first in
    most sessions, so the start-up and the person-left paths are in the fixture)."""
    poses = gen_sessions.session_sequence(seed, countix=countix)["poses"]
    rep = gen_sessions.session_sequence(seed, countix=False)["rep"]
    first = int(np.argmax(rep > 0))
    start = max(0, first - int(8 * FPS))
    return poses[start:start + int(SESSION_SECONDS * FPS)]


SEQUENCES = [  # (name, source, poses)
    ("generated_movenet", "gen.make_sequence seed 7301", lambda: generated(7301, False)),
    ("generated_countix", "gen.make_sequence seed 7302", lambda: generated(7302, True)),
    ("session_movenet", "gen_sessions.session_sequence seed 9100101", lambda: session(9100101, False)),
    ("session_countix", "gen_sessions.session_sequence seed 9100102", lambda: session(9100102, True)),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=MODEL)
    a = ap.parse_args()
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_path=a.model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    assert list(inp["shape"]) == [1, WINDOW, 27] and list(out["shape"]) == [1, 3], (inp["shape"], out["shape"])
    all_poses, all_features, all_outputs, meta = [], [], [], []
    for name, source, make in SEQUENCES:
        poses = make().astype(np.float16)
        features = gen.features(poses.astype(np.float32))
        outputs = np.zeros((len(features), 3), np.float32)
        for t, x in enumerate(windows(features, WINDOW)):
            it.set_tensor(inp["index"], x[None])
            it.invoke()
            outputs[t] = it.get_tensor(out["index"])[0]
        events = C.count(outputs, fps=FPS, at_phase=AT_PHASE, rel_start=True)
        gated = outputs.copy()
        gated[gated_off(np.arange(len(gated))), 2] = 0.0
        gated_events = C.count(gated, fps=FPS, at_phase=AT_PHASE, rel_start=True)
        unusable = features[:, -1] == 0
        runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], unusable.astype(int), [0]]))))[::2]
        print(f"{name}: {len(poses)} frames, {unusable.mean():.2f} unusable (longest run {runs.max() if len(runs) else 0}), "
              f"p>0.6 on {np.mean(outputs[:, 2] > 0.6):.2f}, {len(events)} events, {len(gated_events)} gated")
        all_poses.append(poses)
        all_features.append(features)
        all_outputs.append(outputs)
        meta.append(dict(name=name, source=source, frames=len(poses), events=[int(e) for e in events],
                         gated_events=[int(e) for e in gated_events]))
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "poses.npy"), np.concatenate(all_poses))
    np.save(os.path.join(OUT, "features.npy"), np.concatenate(all_features))
    np.save(os.path.join(OUT, "outputs.npy"), np.concatenate(all_outputs))
    digest = hashlib.sha256(open(a.model, "rb").read()).hexdigest()
    fixture = dict(model_sha256=digest, fps=FPS, at_phase=AT_PHASE, window=WINDOW, sequences=meta)
    with open(os.path.join(OUT, "fixture.json"), "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {size} bytes, model sha256 {digest}")


if __name__ == "__main__":
    main()
