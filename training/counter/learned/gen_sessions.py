"""Training sequences from today's session generator (training/counter/sessions.py) with seeds far
from the benchmark's (tune 2323000+, held-out 2324000+: asserted outside 2323000–2325000). Phase
target: repetition i of a set is i + (t − start) / (end − start) (sessions.py's own schedule: the
output samples the source motion at exactly that phase), held at the integer (rest) in pauses;
rep = 1 from a set's first start to its last end; NaN / 0 elsewhere."""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # training/counter: sessions
sys.path.insert(0, os.path.join(HERE, "..", ".."))  # training/: posegen
import sessions as S  # noqa: E402
import gen  # noqa: E402

BENCH = (2323000, 2325000)


def session_sequence(seed, countix=False, noise="harsh"):
    """`noise`: the sessions' detector model; the shipped nets were trained on "harsh" (the
    classifier's training noise), the default here so the recipe reproduces them."""
    assert not (BENCH[0] <= seed < BENCH[1]), seed
    k, ann = S.make_session(seed, noise=noise)
    fps = ann["fps"]
    T = len(k)
    t = np.arange(T) / fps
    rep = np.zeros(T, np.float32)
    phase = np.full(T, np.nan, np.float32)
    for s in ann["sets"]:
        reps = np.asarray(s["reps"])
        inside = (t >= reps[0, 0]) & (t < reps[-1, 1])
        rep[inside] = 1.0
        ph = np.zeros(T)
        for i, (a, b) in enumerate(reps):
            ph = np.where(t >= a, np.minimum(i + (t - a) / (b - a), i + 1.0), ph)
        phase[inside] = ph[inside]
    mask = np.ones(T, np.float32)
    if countix:
        k = gen.to_countix(np.random.default_rng(seed + 17), k)
    return dict(poses=k.astype(np.float32), rep=rep, phase=phase, mask=mask, countix=countix)


def dataset(first_seed, n, countix_share=0.3, start_crop_share=0.0, noise="harsh"):
    rng = np.random.default_rng(first_seed)
    crop_rng = np.random.default_rng(first_seed + 7_000_000)  # gen.dataset's reason: its own stream
    out = []
    for i in range(n):
        s = session_sequence(first_seed + i, countix=rng.random() < countix_share, noise=noise)
        if crop_rng.random() < start_crop_share:
            gen.start_crop(crop_rng, s)
        s["x"] = gen.features(s.pop("poses"))
        out.append(s)
    return out
