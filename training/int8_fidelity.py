#!/usr/bin/env python3
"""What int8 costs the classifier: the int8 file against its unquantized twin (`train.py
--float-out`), on Penn Action windows (in clip order, with the decision history, as evaluate.py's
(b)) and on held-out generated windows (each alone). Reports argmax agreement, mean |Δp|, the
float model's top-2 margin (log-probability) of the windows whose decision int8 changes, and the
accuracy each gets on Penn. The agreement needs no labels: a quantization change can be judged on
it without selecting on Penn's accuracy.

    python training/int8_fidelity.py FLOAT.tflite INT8.tflite [INT8 ...]
"""
import os, sys
from collections import Counter

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate as E  # noqa: E402
from posegen.dataset import make_windows  # noqa: E402


def penn_probs(clf, clips):
    return np.concatenate([clf.probs(W) for W in clips])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ref = E.Classifier(sys.argv[1])
    X, _, _ = make_windows(np.random.default_rng(777001), 600, ref.L, ref.fps, per_clip=3)
    clips, y = [], []
    for r, k in E.load_penn():
        clips.append(E.windows_over(k, ref.L, ref.stride, "loop"))
        y += [ref.labels.index(E.PENN_MAP.get(r["action"], "other"))] * len(clips[-1])
    y = np.array(y)
    gen_f, penn_f = ref.probs(X, sequence=False), penn_probs(ref, clips)
    top2 = np.sort(np.log(np.maximum(penn_f, 1e-9)), 1)
    margin = top2[:, -1] - top2[:, -2]
    print(f"float {sys.argv[1]}: Penn accuracy {np.mean(penn_f.argmax(1) == y) * 100:.1f}%")
    for path in sys.argv[2:]:
        clf = E.Classifier(path)
        gen_q, penn_q = clf.probs(X, sequence=False), penn_probs(clf, clips)
        flip = penn_f.argmax(1) != penn_q.argmax(1)
        print(f"int8 {path}: Penn accuracy {np.mean(penn_q.argmax(1) == y) * 100:.1f}%")
        print(f"  agreement with float: generated {np.mean(gen_f.argmax(1) == gen_q.argmax(1)) * 100:.2f}% "
              f"(mean |dp| {np.abs(gen_f - gen_q).mean():.4f}), Penn {100 - flip.mean() * 100:.2f}% "
              f"(mean |dp| {np.abs(penn_f - penn_q).mean():.4f})")
        if flip.any():
            right_f = np.sum(flip & (penn_f.argmax(1) == y)); right_q = np.sum(flip & (penn_q.argmax(1) == y))
            print(f"  {flip.sum()} Penn windows change decision: float right in {right_f}, int8 right in {right_q}; "
                  f"their float margins: max {margin[flip].max():.2f}, median {np.median(margin[flip]):.2f} "
                  f"(windows with margin < 0.5: {np.mean(margin < 0.5) * 100:.1f}%)")
            moves = Counter((ref.labels[i], ref.labels[j]) for i, j in zip(penn_f.argmax(1)[flip], penn_q.argmax(1)[flip]))
            print("  float -> int8:", ", ".join(f"{a} -> {b} {n}" for (a, b), n in moves.most_common()))


if __name__ == "__main__":
    main()
