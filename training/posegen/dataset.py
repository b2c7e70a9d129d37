"""Compose clips (action + idle transitions), render through a camera, cut windows."""
import numpy as np
from . import actions as A
from .body import random_body, fk
from .camera import project, movenet_noise, mirror, garbage_frames

LABELS = A.LABELS


def _blend(pa, pb, alpha):
    out = {}
    for k in pa:
        if k in ("anchor", "bar", "tag"):
            out[k] = pa[k]
            continue
        out[k] = pa[k] * (1 - alpha) + pb[k] * alpha
    if "tag" in pb:  # e.g. idle -> barbell squat: the squat's tag decides the occlusion
        out["tag"] = pb["tag"]
    return out


def hide_joints(rng, k, tag):
    """in place: joints a real detector/annotator leaves out. Shoulders and arms behind barbell plates
    (Penn squats and lifts from the side: no shoulder in a third of the frames, wrists in half), lower
    legs below the frame or unannotated (pull-ups: ankles missing in half the frames)."""
    T = len(k)
    if rng.random() < (0.6 if tag == "barbell" else 0.07):
        for group, pr in (([5, 6], 0.8), ([7, 8], 0.5), ([9, 10], 0.7)):
            if rng.random() >= pr:
                continue
            frames = np.ones(T, bool) if rng.random() < 0.5 else rng.random(T) < rng.uniform(0.3, 0.9)
            js = group if rng.random() < 0.6 else [group[rng.integers(2)]]
            for j in js:
                k[frames, j, 2] = 0.0
    if rng.random() < (0.5 if tag == "hanging" else 0.08):
        frames = np.ones(T, bool) if rng.random() < 0.6 else rng.random(T) < rng.uniform(0.3, 0.9)
        js = [15, 16] if rng.random() < 0.65 else [13, 14, 15, 16]
        for j in js:
            k[frames, j, 2] = 0.0


def make_clip(rng, label, T, fps):
    """-> (kp (T,17,3) pixels+score, frame_label (T,) int, size)."""
    b = random_body(rng)
    li = LABELS.index(label)
    if label == "other":
        p, act = A.other(rng, T, fps, b)
        if rng.random() < 0.3:  # mix two "other" activities
            q, _ = A.other(rng, T, fps, b)
            if q["anchor"] == p["anchor"]:
                c = rng.integers(T // 4, 3 * T // 4)
                al = np.clip((np.arange(T) - c) / max(1, rng.uniform(0.3, 1.0) * fps), 0, 1)
                p = _blend(p, q, al)
        flab = np.full(T, li)
    else:
        p, act = A.TARGETS[label](rng, T, fps, b)
        flab = np.full(T, li)
        r = rng.random()
        if r < 0.4:  # idle lead-in or lead-out with a transition
            q = A.o_idle(rng, T, fps, b) if rng.random() < 0.8 else A.o_walk(rng, T, fps, b)
            c = rng.integers(T // 5, 4 * T // 5)
            tr = rng.uniform(0.3, 1.0) * fps
            al = np.clip((np.arange(T) - c) / tr + 0.5, 0, 1)  # 0 before c, 1 after
            if rng.random() < 0.5:  # idle -> action
                p = _blend(q, p, al)
                flab = np.where(al >= 0.5, li, LABELS.index("other"))
            else:  # action -> idle
                p = _blend(p, q, al)
                flab = np.where(al < 0.5, li, LABELS.index("other"))
        elif "bursts" in A.VARIANTS and r < 0.6:  # r34: short bursts (2-4 repetitions) between standing or talking
            q = A.o_talk(rng, T, fps, b) if rng.random() < 0.4 else A.o_idle(rng, T, fps, b)
            ts = np.arange(T) / fps
            al = np.zeros(T)
            t = rng.uniform(0.0, 2.0)
            while t < T / fps:
                d, tr = rng.uniform(1.5, 5.0), rng.uniform(0.25, 0.5)
                al = np.maximum(al, np.clip(np.minimum((ts - t) / tr + 0.5, (t + d - ts) / tr + 0.5), 0, 1))
                t += d + rng.uniform(1.0, 3.0)
            p = _blend(q, p, al)
            flab = np.where(al >= 0.5, li, LABELS.index("other"))
    heading = rng.uniform(-180, 180)
    p["yaw"] = p["yaw"] + heading
    w = fk(p, b)
    # r34 variant: the frame's bottom edge at the knees (a phone on a shelf, a close webcam)
    view = {"knee_cut": True} if "knee_cut" in A.VARIANTS and label != "other" and rng.random() < 0.1 else None
    kp, depth, size = project(w, heading + 0.0, rng, view)
    horiz = float(np.mean(np.abs(p["pitch"]) > 45))
    k = movenet_noise(kp, depth, size, rng, horiz)
    hide_joints(rng, k, p.get("tag", ""))
    if rng.random() < 0.5:
        k = mirror(k, size[0])
    if label == "other" and rng.random() < 0.06:  # no person at all: title card / empty room
        k = garbage_frames(rng, T, size)
        if rng.random() < 0.5:
            k[rng.random(T) < rng.uniform(0, 1)] = 0.0
    if rng.random() < 0.05:  # person not yet in view / gone
        n = rng.integers(1, T // 3)
        if rng.random() < 0.5:
            k[:n] = 0
        else:
            k[-n:] = 0
    return k.astype(np.float32), flab, size


def make_windows(rng, n_clips, L, fps, clip_s=(4.0, 9.0), per_clip=4, class_weights=None):
    """-> X raw windows (N,L,17,3) pixels, y (N,), sizes (N,2)."""
    cw = np.array(class_weights if class_weights is not None else [1, 1, 1, 1, 1, 1.6], float)
    cw /= cw.sum()
    Xs, ys, ss = [], [], []
    for _ in range(n_clips):
        label = LABELS[rng.choice(len(LABELS), p=cw)]
        T = max(L + 1, int(rng.uniform(*clip_s) * fps))
        k, flab, size = make_clip(rng, label, T, fps)
        for _ in range(per_clip):
            s = rng.integers(0, T - L + 1)
            fl = flab[s:s + L]
            li = LABELS.index(label)
            frac = np.mean(fl == li)
            if label != "other" and 0.3 < frac < 0.7:
                continue  # ambiguous transition window
            y = li if frac >= 0.5 else LABELS.index("other")
            Xs.append(k[s:s + L]); ys.append(y); ss.append(size)
    return np.stack(Xs), np.array(ys, np.int64), np.array(ss)


def make_sequences(rng, n_clips, L, fps, stride, clip_s=(4.0, 9.0), class_weights=None):
    """Every window of each clip at `stride`, in order, for models that see the earlier decisions of
    a clip (a second stage over the decision history).
    -> list of (windows (n,L,17,3) pixels, labels (n,), use (n,) bool); labels as make_windows
    (majority of the window's frames), `use` False on ambiguous transition windows (30-70 %), which
    still count as history for the windows after them."""
    cw = np.array(class_weights if class_weights is not None else [1, 1, 1, 1, 1, 1.6], float)
    cw /= cw.sum()
    out = []
    oth = LABELS.index("other")
    for _ in range(n_clips):
        label = LABELS[rng.choice(len(LABELS), p=cw)]
        li = LABELS.index(label)
        T = max(L + 1, int(rng.uniform(*clip_s) * fps))
        k, flab, _ = make_clip(rng, label, T, fps)
        starts = np.arange(0, T - L + 1, stride)
        frac = np.array([np.mean(flab[s:s + L] == li) for s in starts])
        y = np.where(frac >= 0.5, li, oth)
        use = np.ones(len(starts), bool) if label == "other" else ~((frac > 0.3) & (frac < 0.7))
        out.append((np.stack([k[s:s + L] for s in starts]), y.astype(np.int64), use))
    return out
