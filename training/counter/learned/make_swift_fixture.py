"""Writes the parity fixture the Swift port of the phase net is held to
(Tests/ActionsTests/Fixtures/repetition_phase/, read by RepetitionPhaseParityTests and
RepetitionCounterPhaseParityTests).

    /work/venv-train/bin/python training/counter/learned/make_swift_fixture.py

Four sequences from fixed seeds (nothing from ../shared): two of gen.make_sequence (one with
posegen's MoveNet-like poses in pixels, one in Countix's min–max normalised form) and two 45 s
stretches of gen_sessions.session_sequence (today's session generator: an empty room, walking in,
sets and pauses; again one of each form). For each, per frame:
  poses     float16[T, 17, 3]  what the Swift features read. Rounded to float16 *before* anything
                               is computed from them (half the size; every value below is the
                               reference's on exactly these poses)
  features  float32[T, 27]     gen.features(poses)
  outputs   float32[T, 3]      phase_net.PhaseNet(): the installed models (every
                               Sources/CRepetitionModel/repetition_phase*.tflite, the ensemble
                               posewatch embeds) on a zero-started 45-frame window, one LiteRT
                               invoke per frame with the reference kernels (BUILTIN_REF), which
                               the inference core equals bit for bit, averaged in float32
and in fixture.json the sequences' lengths and count.count(outputs, fps=15, at_phase=0.75)'s
events (frame indices), the same on a `gated` copy of the outputs (p(repeating)
set to 0 on a fixed schedule, `gated_off`: many more turn-ons, so the counter's restart and credit
replay are compared many times), with the models' sha256s (the Swift test says when the fixture
is older than the embedded models).

`counter_runs`: the whole reference counter (counter.count_sequence with the default Config: the
phase net for squats, jumping jacks, burpees and push-ups, the rule for lunges) on some of the sequences,
with a fixed label (as `replay --action`) or a label timeline with unnamed stretches (null: no
exercise named, as low_confidence; "other"), so the net's repetitions kept while no exercise is
named and credited when one is are compared too. Each event: [time it happened (`at`), time it
was counted, label, that label's count]. install_model.py runs this after installing.
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
sys.path.insert(0, os.path.dirname(HERE))  # training/counter: counter.py, which imports learned.*
import count as C  # noqa: E402
import counter  # noqa: E402
import gen  # noqa: E402
import gen_sessions  # noqa: E402
import phase_net  # noqa: E402

OUT = os.path.join(ROOT, "Tests", "ActionsTests", "Fixtures", "repetition_phase")
WINDOW = phase_net.WINDOW
FPS = 15.0
AT_PHASE = C.AT_PHASE
SESSION_SECONDS = 45.0


def gated_off(t):
    """Frames on which the gated variant sets p(repeating) to 0: 40-frame gaps (longer than the
    counter's gap: a restart and a credit replay), 8-frame ones (shorter: no restart) and
    15- and 16-frame ones (the gap itself: no restart; one more: a restart)."""
    return (t % 97 < 40) | (t % 53 < 8) | (t % 71 < 15) | (t % 89 < 16)


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


# The whole counter on some sequences: (sequence, label or timeline). A timeline is [start frame,
# label] segments; null = no exercise named (low_confidence, starting up). The sessions' first set
# starts 8 s in (120 frames): the first timeline names squats after the set began, flickers to
# low_confidence, says "other" for longer than the label lag, leaves a set unnamed and names jumping
# jacks late; the second leaves sets unnamed and names lunges (a rule label: the net's pending
# repetitions are dropped, the rule's credited) and then squats.
COUNTER_RUNS = [
    ("generated_movenet", "squats"),
    ("session_movenet", "jumping_jacks"),
    ("session_countix", "lunges"),
    ("generated_countix", "burpees"),
    ("session_movenet", [[0, None], [100, "other"], [150, None], [200, "squats"], [290, None], [297, "squats"],
                         [360, "other"], [430, None], [520, "jumping_jacks"], [600, None], [640, "squats"]]),
    ("session_countix", [[0, None], [190, "lunges"], [300, None], [420, "squats"], [470, "other"], [560, None],
                         [620, "jumping_jacks"]]),
]


def timeline(label, frames):
    if isinstance(label, str):
        return label
    labels = [None] * frames
    for (start, name), following in zip(label, label[1:] + [[frames, None]]):
        labels[start:following[0]] = [name] * (following[0] - start)
    return labels


SEQUENCES = [  # (name, source, poses)
    ("generated_movenet", "gen.make_sequence seed 7301", lambda: generated(7301, False)),
    ("generated_countix", "gen.make_sequence seed 7302", lambda: generated(7302, True)),
    ("session_movenet", "gen_sessions.session_sequence seed 9100101", lambda: session(9100101, False)),
    ("session_countix", "gen_sessions.session_sequence seed 9100102", lambda: session(9100102, True)),
]


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    net = phase_net.PhaseNet()
    print("models: " + ", ".join(os.path.relpath(p, ROOT) for p in net.paths))
    all_poses, all_features, all_outputs, meta, by_name = [], [], [], [], {}
    for name, source, make in SEQUENCES:
        poses = make().astype(np.float16)
        features = gen.features(poses.astype(np.float32))
        outputs = net.outputs(poses.astype(np.float32))
        events = C.count(outputs, fps=FPS, at_phase=AT_PHASE)
        gated = outputs.copy()
        gated[gated_off(np.arange(len(gated))), 2] = 0.0
        gated_events = C.count(gated, fps=FPS, at_phase=AT_PHASE)
        unusable = features[:, -1] == 0
        runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], unusable.astype(int), [0]]))))[::2]
        print(f"{name}: {len(poses)} frames, {unusable.mean():.2f} unusable (longest run {runs.max() if len(runs) else 0}), "
              f"p>0.6 on {np.mean(outputs[:, 2] > 0.6):.2f}, {len(events)} events, {len(gated_events)} gated")
        all_poses.append(poses)
        all_features.append(features)
        all_outputs.append(outputs)
        by_name[name] = (poses, outputs)
        meta.append(dict(name=name, source=source, frames=len(poses), events=[int(e) for e in events],
                         gated_events=[int(e) for e in gated_events]))
    runs = []
    for name, label in COUNTER_RUNS:
        poses, outputs = by_name[name]
        c = counter.count_sequence(poses.astype(np.float32), timeline(label, len(poses)), fps=FPS, phase_outputs=outputs)
        events = [[float(at), float(now), action, int(n)] for (now, action, n), at in zip(c.events, c.event_at)]
        late = sum(1 for at, now, _, _ in events if now - at > 0.5)
        print(f"counter on {name} with {label if isinstance(label, str) else 'a timeline'}: {len(events)} events "
              f"({', '.join(f'{k} {sum(1 for e in events if e[2] == k)}' for k in sorted({e[2] for e in events}))}), {late} counted > 0.5 s late")
        runs.append(dict(sequence=name, label=label, events=events))
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "poses.npy"), np.concatenate(all_poses))
    np.save(os.path.join(OUT, "features.npy"), np.concatenate(all_features))
    np.save(os.path.join(OUT, "outputs.npy"), np.concatenate(all_outputs))
    digests = [hashlib.sha256(open(p, "rb").read()).hexdigest() for p in net.paths]
    fixture = dict(model_sha256s=digests, fps=FPS, at_phase=AT_PHASE, window=WINDOW, sequences=meta,
                   phase_labels=list(counter.Config().phase_labels), counter_runs=runs)
    with open(os.path.join(OUT, "fixture.json"), "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {size} bytes, model sha256s {' '.join(digests)}")


if __name__ == "__main__":
    main()
