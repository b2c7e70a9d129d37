"""Phase-labelled motion sequences for the learned counter (seventh round, issue 9).

A sequence is what a camera sees during a session: stretches of non-exercise (idle, talking,
walking, stretching, random moves, sitting or lying) and sets of repetitive exercise (our five
targets and the generator's repetitive `other` moves: presses, raises, curls, pull-ups, bench
presses, sit-ups, hinges), cross-faded in world space, time-warped (tempo changes inside a set),
seen through one camera with posegen's MoveNet-like noise, dropouts, occlusions and mirroring.
Per frame it carries:
  rep   1 inside a set, 0 elsewhere (the net's p(repeating) target: class-agnostic)
  phase the repetition phase (rep index + fraction; fraction 0 = rest, 0.5 = the far pose), from
        posegen's phase_track (posegen.actions.PHASE_LOG, opt-in, so the classifier's data are
        untouched); NaN outside sets
  mask  0 in the cross-fades, where neither target is defined
Half the sequences (by default) are turned into Countix's representation: each frame's joints
min–max normalised per axis (MediaPipe's 33 landmarks reach a little beyond COCO's wrists and
ankles, so the box is widened a little at random), every joint scored 1 where a pose exists.

Deterministic from the seed. Nothing here reads ../shared.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))  # training/: posegen

from posegen import actions as A  # noqa: E402
from posegen.body import random_body, fk  # noqa: E402
from posegen.camera import project, movenet_noise, mirror  # noqa: E402
from posegen.detector import detector_noise  # noqa: E402
from posegen.dataset import hide_joints  # noqa: E402

FPS = 15.0
BODY = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
PAIRS = [(5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16)]
N_FEAT = 26

# Repetitive moves whose phase posegen knows (phase_track, or burpees' key times), with weights:
# Countix's classes (squat, lunge, push-up, bench press, front raise / pushdown ~ press, pull-up,
# sit-up) are all here, so are the live targets.
REPS = [(A.squats, 2.0), (A.lunges, 1.5), (A.push_ups, 1.5), (A.jumping_jacks, 1.0), (A.burpees, 0.7),
        (A.o_press, 2.0), (A.o_bench, 1.2), (A.o_pullup, 0.8), (A.o_lying_core, 1.0), (A.o_hinge, 0.8)]
# Non-exercise: what fills Countix's sparse videos and the time between sets live.
IDLE = [(A.o_idle, 2.0), (A.o_talk, 2.0), (A.o_walk, 1.5), (A.o_stretch, 1.5), (A.o_random, 1.5),
        (A.o_floor_idle, 0.8)]


def _pick(rng, table):
    w = np.array([x[1] for x in table])
    return table[rng.choice(len(table), p=w / w.sum())][0]


def _warp(rng, n_out, fps):
    """Source times (in frames) for n_out output frames: a tempo factor per set (0.7–1.5) times a
    slow drift (±25 %), so a set speeds up and slows down. Returns float indices."""
    t = np.arange(n_out) / fps
    drift = A.smooth_noise(rng, n_out, fps, 0.25, rng.uniform(0.05, 0.3))
    speed = rng.uniform(0.7, 1.5) * np.exp(drift)
    pos = np.concatenate([[0.0], np.cumsum(speed[:-1])])
    return pos, t


def _resample(p, pos):
    """Samples every per-frame parameter array of p at float frame positions pos."""
    n = len(next(v for v in p.values() if isinstance(v, np.ndarray)))
    src = np.arange(n)
    out = {}
    for k, v in p.items():
        out[k] = np.interp(pos, src, v) if isinstance(v, np.ndarray) and v.shape == (n,) else v
    return out


def _segment(rng, b, rep, n, fps):
    """-> (world joints (n,17,3), phase (n,) or None, tag)."""
    fn = _pick(rng, REPS if rep else IDLE)
    A.PHASE_LOG = []
    try:
        if rep:
            pos, _ = _warp(rng, n, fps)
            n_src = int(np.ceil(pos[-1])) + 2
            out = fn(rng, n_src, fps, b)
            p = out[0] if isinstance(out, tuple) else out
            log = A.PHASE_LOG
        else:
            out = fn(rng, n, fps, b)
            p = out[0] if isinstance(out, tuple) else out
            pos, n_src, log = None, n, []
    finally:
        A.PHASE_LOG = None
    phase = None
    if rep:
        if log and isinstance(log[0], tuple):  # burpees: cycle start times (s)
            starts = np.asarray(log[0][1], float)
            ph_src = np.interp(np.arange(n_src) / fps, starts, np.arange(len(starts)))
        else:
            ph_src = log[0]
        p = _resample(p, pos)
        phase = np.interp(pos, np.arange(n_src), ph_src)
    if fn is A.o_walk:  # a few steps across the room, not a walk out of the picture
        p["x"] = p["x"] * 0.3
        p["z"] = p["z"] * 0.3
    return p, phase


def make_sequence(rng, seconds=(20.0, 90.0), fps=FPS, countix_share=0.5, zoom_share=0.0, noise="harsh"):
    """-> dict(poses float32[T,17,3] (pixels or Countix-normalised), rep, phase, mask, countix).
    `noise`: the detector model, "harsh" (posegen.camera.movenet_noise: the shipped nets') or
    "calibrated" (posegen.detector, fitted to MoveNet on real clips)."""
    b = random_body(rng)
    T = int(rng.uniform(*seconds) * fps)
    heading = rng.uniform(-180, 180)
    parts = []  # (world joints, rep flag, phase)
    total = 0
    rep = rng.random() < 0.5
    sparse = rng.random() < 0.35  # long non-exercise stretches (Countix's sparse videos)
    while total < T:
        if rep:
            n = int(rng.uniform(3, 30) * fps)
        else:
            n = int((rng.uniform(5, 30) if sparse else rng.uniform(1.5, 10)) * fps)
        ov = int(rng.uniform(0.4, 1.5) * fps)
        p, phase = _segment(rng, b, rep, n + ov, fps)
        p["yaw"] = p["yaw"] + heading + (rng.uniform(-40, 40) if rng.random() < 0.3 else 0.0)
        w = fk(p, b)
        horiz = float(np.mean(np.abs(p["pitch"]) > 45))
        parts.append((w, rep, phase, ov, horiz, p.get("tag", "")))
        total += n
        rep = not rep if rng.random() < 0.85 else rep
    # cross-fade consecutive parts over the overlap (world space: a person getting down to the
    # floor, standing up, dropping from the bar)
    W = parts[0][0]
    repf = np.full(len(W), float(parts[0][1]))
    ph = parts[0][2] if parts[0][2] is not None else np.full(len(W), np.nan)
    mask = np.ones(len(W))
    for w, r, phase, ov, _, _ in parts[1:]:
        ov = min(ov, len(W) - 1, len(w) - 1)
        a = np.linspace(0, 1, ov + 2)[1:-1][:, None, None]
        blend = W[-ov:] * (1 - a) + w[:ov] * a
        W = np.concatenate([W[:-ov], blend, w[ov:]])
        m = np.ones(len(w))
        m[:ov] = 0
        mask = np.concatenate([mask[:-ov], m])
        repf = np.concatenate([repf[:-ov], np.full(len(w), float(r))])
        ph = np.concatenate([ph[:-ov], phase if phase is not None else np.full(len(w), np.nan)])
    W, repf, ph, mask = W[:T], repf[:T], ph[:T], mask[:T]
    kp, depth, size = project(W, heading, rng)
    horiz = float(np.mean([x[4] for x in parts]))
    k = movenet_noise(kp, depth, size, rng, horiz) if noise == "harsh" else detector_noise(kp, depth, size, rng)
    tags = [x[5] for x in parts if x[5]]
    hide_joints(rng, k, tags[0] if tags else "")
    if zoom_share > 0 and rng.random() < zoom_share:
        zoom_spans(rng, k, size)
    if rng.random() < 0.5:
        k = mirror(k, size[0])
    countix = rng.random() < countix_share
    if countix:
        k = to_countix(rng, k)
    return dict(poses=k.astype(np.float32), rep=repf.astype(np.float32), phase=ph.astype(np.float32),
                mask=mask.astype(np.float32), countix=countix)


def zoom_spans(rng, k, size, fps=FPS):
    """A camera operator zooming in and out (online videos): one to three spans of 2–8 s in which the
    image is magnified 1.5–2.5× about a point near the person's upper body, cut in or out abruptly;
    joints that leave the frame score 0 (the legs, usually), so the counter holds their positions
    from before the zoom, in the old image scale, as it does on real footage. In place."""
    T = len(k)
    w, h = float(size[0]), float(size[1])
    for _ in range(int(rng.integers(1, 4))):
        n = int(rng.uniform(2.0, 8.0) * fps)
        if T <= n + 1:
            return
        a = int(rng.integers(0, T - n))
        seen = k[a:a + n, :, 2] >= 0.3
        upper = [5, 6, 11, 12]
        pts = k[a:a + n][:, upper, :2][seen[:, upper]]
        if len(pts) == 0:
            continue
        centre = pts.mean(0) + rng.normal(0, 0.05, 2) * np.array([w, h])
        factor = rng.uniform(1.5, 2.5)
        seg = k[a:a + n]
        seg[..., :2] = (seg[..., :2] - centre) * factor + np.array([w / 2, h / 2])
        out = (seg[..., 0] < 0) | (seg[..., 0] > w) | (seg[..., 1] < 0) | (seg[..., 1] > h)
        seg[..., 2] = np.where(out, 0.0, seg[..., 2])


def to_countix(rng, k):
    """Countix's representation: per frame, per axis min–max over the landmarks; all joints scored 1
    on frames with a pose (MediaPipe always returns all 33), frames without one all zero. MediaPipe
    is temporally smooth: a light causal smoothing stands in for that on part of the sequences."""
    k = k.copy()
    present = (k[..., 2] >= 0.3).sum(1) >= 7
    xy = k[..., :2].copy()
    if rng.random() < 0.6:
        a = rng.uniform(0.3, 0.7)
        for t in range(1, len(xy)):
            xy[t] = a * xy[t - 1] + (1 - a) * xy[t]
    lo, hi = xy.min(1), xy.max(1)
    ext = np.maximum(hi - lo, 1e-6)
    # hands, feet and face landmarks beyond COCO's joints widen MediaPipe's box a little
    lo = lo - ext * rng.uniform(0.0, 0.08, 2)
    hi = hi + ext * rng.uniform(0.0, 0.08, 2)
    out = np.zeros_like(k)
    out[..., :2] = (xy - lo[:, None]) / (hi - lo)[:, None]
    out[..., 2] = 1.0
    out[~present] = 0.0
    return out


def features(poses, min_score=0.3, min_visible=7, gap_frames=30):
    """float32[T,17,3] -> float32[T, 27]: counter.py's 26 mirror-invariant features (joints held at
    their last confident position, box-centred, divided by the box's larger side) and a usable flag.
    A frame without a usable pose repeats the last features (flag 0); 2 s without one forgets the
    held joints (the person left), as the counter does."""
    T = len(poses)
    out = np.zeros((T, N_FEAT + 1), np.float32)
    held = np.zeros((17, 2))
    seen = np.zeros(17, bool)
    body = np.zeros(17, bool)
    body[BODY] = True
    last = np.zeros(N_FEAT, np.float32)
    missing = 0
    li = [p[0] for p in PAIRS]
    ri = [p[1] for p in PAIRS]
    for t in range(T):
        conf = poses[t, :, 2] >= min_score
        if conf[BODY].sum() < min_visible:
            missing += 1
            if missing >= gap_frames:
                seen[:] = False
                last = np.zeros(N_FEAT, np.float32)
            out[t, :N_FEAT] = last
            continue
        missing = 0
        upd = conf & body
        held[upd] = poses[t, upd, :2]
        seen |= upd
        pts = held[seen]
        lo, hi = pts.min(0), pts.max(0)
        q = np.where(seen[:, None], (held - (lo + hi) / 2) / max(float(np.max(hi - lo)), 1e-6), 0.0)
        left, right = q[li], q[ri]
        last = np.concatenate([q[0], ((left + right) / 2).reshape(-1), np.abs(left - right).reshape(-1)]).astype(np.float32)
        out[t, :N_FEAT] = last
        out[t, N_FEAT] = 1.0
    return out


def windows(x, window):
    """float[T, F] -> float[T, window, F]: per frame, the last `window` rows, zero rows before the
    start (posewatch's RepetitionPhaseNet starts its ring all zero the same way)."""
    padded = np.concatenate([np.zeros((window - 1, x.shape[1]), x.dtype), x])
    return padded[np.arange(len(x))[:, None] + np.arange(window)[None]]


def start_crop(rng, seq, max_seconds=10.0, fps=FPS):
    """A stream that opens mid-exercise (a clip cut from a longer video, a camera switched on while
    someone is already in the plank): drops the first 0–`max_seconds` of every per-frame array of
    `seq` (poses or features, targets), keeping at least 3 s. In place."""
    T = len(seq["rep"])
    cut = min(int(rng.uniform(0.0, max_seconds) * fps), max(0, T - 3 * int(fps)))
    for key in ("poses", "x", "rep", "phase", "mask"):
        if key in seq:
            seq[key] = seq[key][cut:]


def dataset(seed, n, start_crop_share=0.0, **kw):
    """n sequences -> list of dicts with 'x' (features) added and poses dropped (memory). A share
    `start_crop_share` of them opens mid-exercise (`start_crop`), drawn from a random stream of its
    own so that the sequences themselves do not change with the share."""
    rng = np.random.default_rng(seed)
    crop_rng = np.random.default_rng(seed + 7_000_000)
    seqs = []
    for _ in range(n):
        s = make_sequence(rng, **kw)
        if crop_rng.random() < start_crop_share:
            start_crop(crop_rng, s)
        s["x"] = features(s.pop("poses"))
        seqs.append(s)
    return seqs
