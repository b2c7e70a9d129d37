"""The phase net inside the reference counter (counter.py, `phase_labels`), scored by evaluate.py's own
commands with the classifier's labels as the appliance runs (round 14, research).

`posewatch replay` gives the classifier's decisions; this script re-counts every replay with the Python
reference counter fed the same label timeline (as `evaluate.py replay` does) and the phase net's outputs
(the int8 model on LiteRT's reference kernels: bit-identical to posewatch's core), and hands evaluate.py
the Python events in place of Swift's. So `sessions` (both modes) and `repcount`/`countix` score the
counter that would ship before it is ported.

    python training/counter/learned/evaluate_phase.py --model M.tflite --labels squats,jumping_jacks -- \
        sessions --posewatch .build/release/posewatch --dir /tmp/posewatch-sessions
    python training/counter/learned/evaluate_phase.py --model M.tflite --labels squats,jumping_jacks -- repcount
    python training/counter/learned/evaluate_phase.py --model M.tflite --labels squats,jumping_jacks -- countix
    python training/counter/learned/evaluate_phase.py --model M.tflite --clips DIR/*.npy --labels-csv L.csv --posewatch P
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import counter  # noqa: E402
import evaluate  # noqa: E402
import gen  # noqa: E402

WINDOW = 45
CACHE = os.environ.get("PHASE_CACHE", "/tmp/posewatch-phase-cache")


class Net:
    def __init__(self, path):
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
        self.it = Interpreter(model_path=path, num_threads=1, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        self.it.allocate_tensors()
        self.inp = self.it.get_input_details()[0]["index"]
        self.out = self.it.get_output_details()[0]["index"]
        self.tag = hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]

    def outputs(self, poses):
        """float[T, 3] per frame: the net on the last 45 frames' features (zero rows before the start)."""
        key = hashlib.sha256(np.ascontiguousarray(poses, np.float32).tobytes()).hexdigest()[:24]
        path = os.path.join(CACHE, f"{self.tag}_{key}.npy")
        if os.path.exists(path):
            return np.load(path)
        x = gen.features(np.asarray(poses, np.float32))
        padded = np.concatenate([np.zeros((WINDOW - 1, x.shape[1]), np.float32), x])
        ys = np.zeros((len(x), 3), np.float32)
        for t in range(len(x)):
            self.it.set_tensor(self.inp, padded[None, t:t + WINDOW])
            self.it.invoke()
            ys[t] = self.it.get_tensor(self.out)[0]
        os.makedirs(CACHE, exist_ok=True)
        np.save(path, ys)
        return ys


def run_counter(poses, labels_per_frame, fps, config, outputs):
    c = counter.RepetitionCounter(config)
    if outputs is not None and config.phase_labels:
        from learned.count import PhaseCounter
        c.phase = PhaseCounter(fps)
        c.phase_outputs = outputs
    for i, pose in enumerate(poses):
        c.process(i / fps, pose if pose[:, 2].max() > 0 else None, labels_per_frame[i])
    return c


def timeline(lines, n, fps):
    """The classifier's label per frame from replay's decisions, as evaluate.py replay feeds the reference."""
    decisions = [(r["t"], r["label"]) for r in lines if "label" in r and "event" not in r]
    out, k = [], -1
    for i in range(n):
        t = i / fps
        while k + 1 < len(decisions) and decisions[k + 1][0] <= t + 2e-3:
            k += 1
        label = decisions[k][1] if k >= 0 else "starting_up"
        out.append(label if label in counter.COUNTABLE or label == "other" else None)
    return out


def python_lines(c):
    return [{"event": "rep", "label": label, "t": round(now, 3), "count": count, "at": round(at, 3)}
            for (now, label, count), at in zip(c.events, c.event_at)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="the phase net, int8 .tflite")
    ap.add_argument("--labels", default="squats,jumping_jacks", help="labels counted by the net ('' = rules only)")
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    nets = [Net(m) for m in a.model.split(",")]

    class Ensemble:  # several models: their outputs averaged (research)
        def outputs(self, poses):
            return sum(n.outputs(poses) for n in nets) / len(nets)

    net = nets[0] if len(nets) == 1 else Ensemble()
    labels = tuple(x for x in a.labels.split(",") if x)
    config = counter.Config(phase_labels=labels)
    fps = 15.0
    real_replay = evaluate.replay_jsonl

    def replay(posewatch, path, extra):
        lines = real_replay(posewatch, path, extra)
        poses = np.load(path)
        if "--action" in extra:
            per_frame = [extra[extra.index("--action") + 1]] * len(poses)
        else:
            per_frame = timeline(lines, len(poses), fps)
        c = run_counter(poses, per_frame, fps, config, net.outputs(poses) if labels else None)
        return [r for r in lines if r.get("event") != "rep"] + python_lines(c)

    evaluate.replay_jsonl = replay
    original = counter.count_sequence

    def count_sequence(poses, action="squats", fps=15.0, config_=None):
        cfg = config_ or counter.Config(fps=fps, phase_labels=labels)
        return original(poses, action, fps, cfg, phase_outputs=net.outputs(poses) if labels else None)

    counter.count_sequence = lambda poses, action="squats", fps=15.0, config=None: count_sequence(poses, action, fps, None)
    rest = a.rest[1:] if a.rest and a.rest[0] == "--" else a.rest
    if rest and rest[0] == "dev":
        return dev_clips(rest[1:], replay)
    sys.argv = ["evaluate.py"] + rest
    evaluate.main()


def dev_clips(argv, replay):
    """The dev videos with counts (labels.csv) from keypoint files equal to posewatch's own (one
    .npy per clip, named after it): the classifier's labels (replay's decisions) and the label fixed,
    whole clip and inside the labelled span, against labels.csv's count and tolerance."""
    import csv
    ap = argparse.ArgumentParser(prog="evaluate_phase.py dev")
    ap.add_argument("--keypoints", required=True, help="folder of <clip stem>.npy")
    ap.add_argument("--labels-csv", required=True)
    ap.add_argument("--posewatch", default=".build/release/posewatch")
    a = ap.parse_args(argv)
    with open(a.labels_csv) as f:
        clips = [r for r in csv.DictReader(f) if r["reps"] and r["label"] != "other"]
    tally = {k: [0, 0.0] for k in ("classifier whole", "classifier span", "fixed whole", "fixed span")}
    for clip in clips:
        stem = os.path.splitext(os.path.basename(clip["file"]))[0]
        path = os.path.join(a.keypoints, stem + ".npy")
        gt, tol, label = int(clip["reps"]), int(clip["reps_tolerance"] or 0), clip["label"]
        lo = float(clip["active_from_s"]) if clip["active_from_s"] else -np.inf
        hi = float(clip["active_to_s"]) if clip["active_to_s"] else np.inf
        row = f"  {stem:26s} {label:14s} {gt:3d} ±{tol}"
        for mode, extra in (("classifier", []), ("fixed", ["--action", label])):
            events = [r for r in replay(a.posewatch, path, extra) if r.get("event") == "rep" and r["label"] == label]
            whole = len(events)
            span = sum(lo <= r["t"] <= hi for r in events)
            for k, n in (("whole", whole), ("span", span)):
                t = tally[f"{mode} {k}"]
                t[0] += abs(n - gt) <= tol
                t[1] += abs(n - gt) / gt
            row += f" | {mode}: {whole:3d}{'x' if abs(whole - gt) > tol else ' '} span {span:3d}{'x' if abs(span - gt) > tol else ' '}"
        print(row)
    for k, (within, err) in tally.items():
        print(f"  {k:17s}: within tolerance {within}/{len(clips)}  MAE {err / len(clips):.3f}")


if __name__ == "__main__":
    main()
