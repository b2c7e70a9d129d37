"""Sixth-round experiment (issue 9): can the action classifier veto the fixed-label counter's
spurious counts on Countix's long videos?

Countix's poses are min–max normalised per frame and per axis (data README), which the classifier's
normalisation (hip-centred, torso-scaled, aspect kept) cannot undo. `recover_pixels` estimates each
frame's lost axis extents by fitting a human skeleton's bone lengths (fractions of body height) to the
MediaPipe x, y, z bone vectors (non-negative least squares on the squared extents), and re-anchors the
frame at the lowest point (the floor) and the ankles' midpoint, which the per-frame normalisation also
lost. The classifier (LiteRT, the shipped .tflite) then decides every `stride` frames, and the counter
runs with the sequence's label fixed except where the classifier has said `other` with probability
≥ P for K decisions in a row (then the label is `other`: nothing counts).

    /work/venv-train/bin/python training/counter/countix_veto.py [--phase 1] [--grid]

Dev tool only: the issue measures the counter with the classifier bypassed (`--action`), so a veto is
not the evaluation protocol; this measures how much the classifier could add. Reads ../shared/data only.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import counter  # noqa: E402
import data  # noqa: E402

# MediaPipe landmark pairs and their length in body heights (adult anthropometry, rounded).
SKELETON = [(11, 12, 0.22), (23, 24, 0.17), (11, 23, 0.29), (12, 24, 0.29), (11, 13, 0.186), (12, 14, 0.186),
            (13, 15, 0.146), (14, 16, 0.146), (23, 25, 0.245), (24, 26, 0.245), (25, 27, 0.246), (26, 28, 0.246)]
ANKLES = (27, 28)


def nonnegative_least_squares(m: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Exact NNLS for three unknowns: the best of the least-squares solutions on every subset of columns."""
    best, best_error = np.zeros(m.shape[1]), np.inf
    for size in range(1, m.shape[1] + 1):
        for subset in itertools.combinations(range(m.shape[1]), size):
            cols = list(subset)
            solution, *_ = np.linalg.lstsq(m[:, cols], r, rcond=None)
            if np.all(solution >= 0):
                u = np.zeros(m.shape[1])
                u[cols] = solution
                error = float(np.sum((m @ u - r) ** 2))
                if error < best_error:
                    best, best_error = u, error
    return best


def axis_extents(landmarks: np.ndarray) -> np.ndarray:
    """float[33, 3] normalised landmarks → the frame's (x, y, z) extents in body heights."""
    rows = [(landmarks[a] - landmarks[b]) ** 2 / length ** 2 for a, b, length in SKELETON]
    return np.sqrt(nonnegative_least_squares(np.array(rows), np.ones(len(rows))))


def recover_pixels(raw: np.ndarray, pixels_per_height: float = 300.0) -> np.ndarray:
    """float[T, 99] Countix rows → float32[T, 17, 3] COCO-17 (x, y, score) with the aspect restored."""
    landmarks = raw.reshape(len(raw), 33, 3)
    out = np.zeros((len(raw), 17, 3), np.float32)
    for t, frame in enumerate(landmarks):
        if not np.any(frame):
            continue
        ex, ey, _ = axis_extents(frame)
        ankle_x = frame[list(ANKLES), 0].mean()
        coco = frame[data.MEDIAPIPE_FOR_COCO]
        out[t, :, 0] = (coco[:, 0] - ankle_x) * ex * pixels_per_height + 400
        out[t, :, 1] = (coco[:, 1] - 1.0) * ey * pixels_per_height + 400
        out[t, :, 2] = 0.9
    return out


def classifier_probabilities(model: str, phase: int):
    """{name: (T, window probabilities, window end frames)} for Countix's squat/lunge/push-up videos."""
    sys.path.insert(0, os.path.dirname(HERE))
    from evaluate import Classifier, windows_over  # training/evaluate.py
    clf = Classifier(model)
    assert clf.labels[-1] == "other"
    result = {}
    with open(os.path.join(data.COUNTIX, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["usable"] != "1" or row["label"] not in data.COUNTIX_ACTION:
                continue
            raw = data.subsample(np.load(os.path.join(data.COUNTIX, row["npy"])), phase=phase)
            poses = recover_pixels(raw)
            probs = clf.probs(windows_over(poses, clf.L, clf.stride))
            ends = np.minimum(np.arange(len(probs)) * clf.stride + clf.L - 1, len(poses) - 1)
            result[os.path.basename(row["npy"])] = (probs, ends, clf.labels)
    return result


def count_with_veto(seq, probs, ends, labels, p_other: float, run: int) -> int:
    veto = np.zeros(len(seq.poses), bool)
    streak = 0
    other = labels.index("other")
    for p, end in zip(probs, ends):
        streak = streak + 1 if p[other] >= p_other else 0
        veto[end:] = streak >= run
    labels_per_frame = ["other" if vetoed else seq.label for vetoed in veto]
    return counter.count_sequence(seq.poses, labels_per_frame, fps=seq.fps).session


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(data.PACKAGE_ROOT, "Sources/CActionModel/action_classifier.tflite"))
    ap.add_argument("--phase", type=int, default=0)
    ap.add_argument("--grid", action="store_true", help="P ∈ {0.8, 0.9, 0.97} × K ∈ {1, 2, 4}; default P 0.97, K 2")
    args = ap.parse_args()
    if not os.path.isdir(data.COUNTIX):
        print(f"{data.COUNTIX} is absent: nothing to evaluate", file=sys.stderr)
        sys.exit(0)
    seqs = data.load_countix(phase=args.phase)
    probs = classifier_probabilities(args.model, args.phase)
    fixed = {s.name: counter.count_sequence(s.poses, s.label).session for s in seqs}
    settings = list(itertools.product((0.8, 0.9, 0.97), (1, 2, 4))) if args.grid else [(0.97, 2)]
    gts = [s.count for s in seqs]
    # the groups evaluate.py countix reports: all, split halves, dense and sparse (data.SPARSE_PERIOD_S)
    parts = {"all": range(len(seqs)), "odd": range(1, len(seqs), 2), "even": range(0, len(seqs), 2),
             "dense": [i for i, s in enumerate(seqs) if not s.is_sparse],
             "sparse": [i for i, s in enumerate(seqs) if s.is_sparse]}
    for p_other, run in [(None, None)] + settings:
        preds = [fixed[s.name] if p_other is None or s.name not in probs
                 else count_with_veto(s, *probs[s.name], p_other, run) for s in seqs]
        name = "label fixed" if p_other is None else f"veto P {p_other} K {run}"
        print(f"{name:18s} " + "  ".join(
            f"{k} %.3f / %.3f" % data.mae_obo([preds[i] for i in idx], [gts[i] for i in idx]) for k, idx in parts.items()))


if __name__ == "__main__":
    main()
