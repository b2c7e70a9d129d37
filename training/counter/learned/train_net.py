"""Trains the phase net on generated sequences only (gen.py, gen_sessions.py; README.md here).

Per frame, from the last WINDOW frames of the 26 pose features and the usable flag, it predicts
(cos φ, sin φ) of the repetition phase (φ = 0 rest, π the far pose) and p(repeating). The counter
(count.py) accumulates the unwrapped phase while p(repeating) is high.

    python training/counter/learned/train_net.py --sessions 300 --steps 15000 --out DIR   # about 5 minutes

Deterministic from --seed (TensorFlow op determinism, one thread). Nothing here reads ../shared.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

WINDOW = 45  # 3 s at 15 fps: one slow repetition (0.3 reps/s) nearly fits
N_IN = gen.N_FEAT + 1


def stack(seqs):
    """Concatenates the sequences, each preceded by WINDOW-1 zero rows (what the live counter has
    before the first frame), and returns (X, targets, valid end indices)."""
    xs, ys, ends = [], [], []
    off = 0
    for s in seqs:
        T = len(s["x"])
        pad = np.zeros((WINDOW - 1, N_IN), np.float32)
        xs += [pad, s["x"]]
        frac = np.nan_to_num(s["phase"] % 1.0)
        ang = 2 * np.pi * frac
        inset = (s["rep"] > 0.5) & np.isfinite(s["phase"])
        y = np.stack([np.cos(ang), np.sin(ang), s["rep"],
                      (inset & (s["mask"] > 0) & (s["x"][:, -1] > 0)).astype(np.float32), s["mask"]], -1)
        ys += [np.zeros((WINDOW - 1, 5), np.float32), y.astype(np.float32)]
        ends.append(off + WINDOW - 1 + np.arange(T))
        off += WINDOW - 1 + T
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ends)


def build_core(tf, widths=(32, 32, 48, 48), dense=64, batch=None):
    """The net, written so that its int8 TFLite file has posewatch's inference-core operators only
    (Sources/InferenceCore/Operators). The window's own mean is removed from every channel (the
    motion, whatever the posture) and the raw rows kept beside it (the posture: lying, plank,
    standing says which end of the motion is the rest); convolutions over time as Conv2D over
    [batch, T, 1, C]; static Reshapes instead of Flatten (no SHAPE / STRIDED_SLICE / PACK when
    converted with batch=1, as export.py does), keeping where in the window things happened: the
    phase asked for is the last frame's."""
    k = tf.keras
    inp = k.Input((WINDOW, N_IN), batch_size=batch, name="features")
    centred = inp - k.ops.mean(inp, axis=1, keepdims=True)
    x = k.layers.Concatenate()([centred, inp])
    x = k.layers.Reshape((WINDOW, 1, 2 * N_IN))(x)
    x = k.layers.Conv2D(widths[0], (5, 1), activation="relu")(x)
    x = k.layers.Conv2D(widths[1], (9, 1), activation="relu")(x)
    x = k.layers.MaxPooling2D((2, 1))(x)
    x = k.layers.Conv2D(widths[2], (3, 1), activation="relu")(x)
    x = k.layers.MaxPooling2D((2, 1))(x)
    x = k.layers.Conv2D(widths[3], (3, 1), activation="relu")(x)
    x = k.layers.Reshape((int(np.prod(x.shape[1:])),))(x)  # static: keeps where in the window things happened
    x = k.layers.Dense(dense, activation="relu")(x)
    ph = k.layers.Dense(2)(x)
    p = k.layers.Dense(1, activation="sigmoid")(x)
    return k.Model(inp, k.layers.Concatenate(name="phase_rep")([ph, p]))


def loss_fn(tf):
    def loss(y, out):
        cs, rep, wph, mask = y[:, :2], y[:, 2], y[:, 3], y[:, 4]
        p = tf.clip_by_value(out[:, 2], 1e-6, 1 - 1e-6)
        bce = -(rep * tf.math.log(p) + (1 - rep) * tf.math.log(1 - p))
        mse = tf.reduce_sum(tf.square(out[:, :2] - cs), axis=1)
        return tf.reduce_mean(mask * bce + wph * mse)
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--sequences", type=int, default=1200)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--countix-share", type=float, default=0.5)
    ap.add_argument("--out", default="/tmp/cnt7/model")
    ap.add_argument("--widths", default="32,32,48,48")
    ap.add_argument("--dense", type=int, default=64)
    ap.add_argument("--zoom-share", type=float, default=0.0, help="share of sequences with camera zoom spans (gen.zoom_spans)")
    ap.add_argument("--start-crop", type=float, default=0.0,
                    help="share of sequences that open mid-exercise, the first 0-10 s dropped (gen.start_crop)")
    ap.add_argument("--sessions", type=int, default=0, help="also this many sequences from ../sessions.py (gen_sessions.py)")
    ap.add_argument("--sessions-seed", type=int, default=9100000)
    ap.add_argument("--sessions-countix", type=float, default=0.3)
    ap.add_argument("--noise", choices=("harsh", "calibrated"), default="harsh",
                    help="the detector model of both sources (gen.py, sessions.py --noise; the shipped nets: harsh)")
    a = ap.parse_args()
    t0 = time.time()
    kw = dict(countix_share=a.countix_share, zoom_share=a.zoom_share, start_crop_share=a.start_crop, noise=a.noise)
    tr = gen.dataset(a.seed, a.sequences, **kw)
    va = gen.dataset(a.seed + 1, max(50, a.sequences // 10), **kw)
    if a.sessions:
        import gen_sessions
        tr += gen_sessions.dataset(a.sessions_seed, a.sessions, a.sessions_countix, a.start_crop, a.noise)
        va += gen_sessions.dataset(a.sessions_seed + 500000, max(10, a.sessions // 10), a.sessions_countix, a.start_crop,
                                   a.noise)
    Xtr, Ytr, Etr = stack(tr)
    Xva, Yva, Eva = stack(va)
    print(f"generated {len(tr)} + {len(va)} sequences, {len(Etr)} + {len(Eva)} frames, rep share "
          f"{Ytr[Etr, 2].mean():.2f}, in {time.time() - t0:.0f}s  sha256(X)={hashlib.sha256(Xtr.tobytes()).hexdigest()[:16]}",
          flush=True)
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(a.seed)
    tf.config.experimental.enable_op_determinism()
    widths = tuple(int(w) for w in a.widths.split(","))
    model = build_core(tf, widths, a.dense)
    lr = tf.keras.optimizers.schedules.CosineDecay(2e-3, a.steps, alpha=0.05)
    model.compile(tf.keras.optimizers.Adam(lr), loss_fn(tf))
    print(f"parameters {model.count_params()}", flush=True)
    rng = np.random.default_rng(a.seed)
    offs = np.arange(-WINDOW + 1, 1)
    vsel = rng.choice(Eva, min(20000, len(Eva)), replace=False)
    Xv, Yv = Xva[vsel[:, None] + offs], Yva[vsel]
    run = 0.0
    for step in range(1, a.steps + 1):
        idx = rng.choice(Etr, a.batch)
        l = model.train_on_batch(Xtr[idx[:, None] + offs], Ytr[idx])
        run = 0.98 * run + 0.02 * float(l) if step > 1 else float(l)
        if step % 1000 == 0 or step == a.steps:
            out = model.predict(Xv, batch_size=2048, verbose=0)
            m = Yv[:, 4] > 0
            acc = np.mean((out[m, 2] > 0.5) == (Yv[m, 2] > 0.5))
            w = Yv[:, 3] > 0
            err = np.abs(np.angle(np.exp(1j * (np.arctan2(out[w, 1], out[w, 0]) - np.arctan2(Yv[w, 1], Yv[w, 0])))))
            print(f"step {step}: loss {run:.3f}  val p(rep) accuracy {acc:.3f}  phase error median "
                  f"{np.degrees(np.median(err)):.0f} deg, within 45 deg {np.mean(err < np.pi / 4):.2f}  "
                  f"({time.time() - t0:.0f}s)", flush=True)
    os.makedirs(a.out, exist_ok=True)
    model.save(os.path.join(a.out, "model.keras"))
    import json
    json.dump({"core": True, "window": WINDOW, "widths": list(widths), "dense": a.dense},
              open(os.path.join(a.out, "build.json"), "w"))
    print(f"saved {a.out}/model.keras in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
