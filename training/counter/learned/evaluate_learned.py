"""Measures the learned counter as `evaluate.py countix` does, beside the rule-based counter on the
same sequences (seventh round, issue 9). Measures only: nothing here trains on ../shared.

    /work/venv-train/bin/python training/counter/learned/evaluate_learned.py --model /tmp/cnt7/m1 [--phase 1]
        [--config "p_on=0.6, min_mag=0.3"] [--hybrid 0.5] [--rules-config "stuck_s=3.0"] [--set countix|penn|videos]

Modes (each prints the Countix table of evaluate.py: all, odd/even halves, dense/sparse, per class):
  net      count.py on the net's output (phase accumulated while p(repeating) is on)
  rules    counter.py (the chosen rule-based counter, label fixed), for reference
  hybrid   the rule-based counter's events, kept only where the net's p(repeating) ≥ --hybrid
The net's per-frame output is cached in the model directory (recomputed with --fresh).
"""
from __future__ import annotations

import argparse
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))  # training/counter: counter, data, evaluate, scoring
import count as C  # noqa: E402
import counter  # noqa: E402
import data  # noqa: E402
import evaluate  # noqa: E402
import gen  # noqa: E402
from train_net import N_IN  # noqa: E402


def windows(x, window):
    padded = np.concatenate([np.zeros((window - 1, N_IN), np.float32), x])
    return padded[np.arange(len(x))[:, None] + np.arange(window)[None]]


def predict_all(model_dirs, name, seqs, fresh=False):
    """The net's output per frame for each sequence; several model directories (comma-separated)
    average their outputs (an ensemble)."""
    dirs = model_dirs.split(",")
    outs = [predict_one(d, name, seqs, fresh) for d in dirs]
    return [sum(o[i] for o in outs) / len(outs) for i in range(len(seqs))]


def predict_one(model_dir, name, seqs, fresh=False):
    """A model directory ending in "@int8" runs its model_int8.tflite (export.py) instead."""
    if model_dir.endswith("@int8"):
        return predict_int8(model_dir[:-5], name, seqs, fresh)
    path = os.path.join(model_dir, f"pred_{name}.npz")
    if os.path.exists(path) and not fresh:
        z = np.load(path)
        return [z[s.name] for s in seqs]
    import tensorflow as tf
    try:  # one thread (the machine is shared); too late once TensorFlow has run
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass
    import keras
    model = keras.models.load_model(os.path.join(model_dir, "model.keras"), compile=False)
    window = model.input_shape[1]
    outs = [model.predict(windows(gen.features(s.poses), window), batch_size=2048, verbose=0) for s in seqs]
    np.savez(path, **{s.name: o for s, o in zip(seqs, outs)})
    return outs


def predict_int8(model_dir, name, seqs, fresh=False):
    path = os.path.join(model_dir, f"pred_int8_{name}.npz")
    if os.path.exists(path) and not fresh:
        z = np.load(path)
        return [z[s.name] for s in seqs]
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        from tensorflow.lite import Interpreter
    it = Interpreter(model_path=os.path.join(model_dir, "model_int8.tflite"), num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    window = int(inp["shape"][1])
    outs = []
    for s in seqs:
        X = windows(gen.features(s.poses), window)
        o = np.zeros((len(X), 3), np.float32)
        for i, x in enumerate(X):
            it.set_tensor(inp["index"], x[None])
            it.invoke()
            o[i] = it.get_tensor(out["index"])[0]
        outs.append(o)
    np.savez(path, **{s.name: o for s, o in zip(seqs, outs)})
    return outs


def len_window(model_dirs):
    import keras
    return keras.models.load_model(os.path.join(model_dirs.split(",")[0].removesuffix("@int8"), "model.keras"), compile=False).input_shape[1]


def rule_events(s, label=None, config=None):
    c = counter.count_sequence(s.poses, label or s.label, config=config)
    return [int(round(t * s.fps)) for t, _, _ in c.events]


def hybrid(events, out, thr, look_s=1.0, hold_s=1.0, fresh=None, exempt=True, far_cos=None, far_s=0.5, fps=15.0):
    """Keeps a rule-based event when the net's p(repeating) reached thr within look_s before it,
    or within hold_s after it (the event is then held and credited on that later frame: with
    hold_s ≤ 1 s it is still within 1 s of the repetition's end, which comes after the event).
    Where `fresh` (bool per frame) is true, the net has not yet seen a full window of this person
    (the first seconds after it appears): it cannot judge, and the event is kept (exempt=False:
    judged anyway). far_cos (a variant): the net must also put the person near the far pose
    (cos φ ≤ far_cos) within far_s of the event."""
    k = int(round(look_s * fps))
    h = int(round(hold_s * fps))
    f = int(round(far_s * fps))
    kept = []
    for e in events:
        if exempt and fresh is not None and fresh[e]:
            kept.append(e)
            continue
        if out[max(0, e - k):e + h + 1, 2].max() < thr:
            continue
        if far_cos is not None and out[max(0, e - f):e + f + 1, 0].min() > far_cos:
            continue
        kept.append(e)
    return kept


def fresh_frames(poses, window, gap_frames=30):
    """bool per frame: fewer than `window` frames since the person appeared (first usable pose
    after ≥ 2 s without one, as the counter's reset)."""
    usable = gen.features(poses)[:, -1] > 0
    out = np.zeros(len(poses), bool)
    start, missing = None, gap_frames
    for t, u in enumerate(usable):
        if u:
            if missing >= gap_frames:
                start = t
            missing = 0
        else:
            missing += 1
        out[t] = start is not None and t - start < window
    return out


def read_pose_text(path):
    """A pose dump of `posewatch replay` (one line per frame: time, then 17 × (x, y, score), or
    nothing / "none" where no pose was found) → float32[T, 17, 3]."""
    rows = []
    for line in open(path):
        v = line.split()[1:]
        rows.append(np.array(v, np.float32).reshape(17, 3) if len(v) == 51 else np.zeros((17, 3), np.float32))
    return np.stack(rows)


def videos(poses_dir=None):
    """The dev videos with counts: MoveNet stand-in poses (videos_movenet.py's cache), or with
    poses_dir the poses `posewatch replay` found (its own core, cropping and tracking; text dumps
    named <clip>.txt)."""
    vdir = os.path.join(data.SHARED_DATA, "videos")
    rows = [r for r in csv.DictReader(open(os.path.join(vdir, "labels.csv"))) if r["reps"] and r["label"] != "other"]
    seqs = []
    for r in rows:
        name = os.path.splitext(os.path.basename(r["file"]))[0]
        poses = read_pose_text(os.path.join(poses_dir, name + ".txt")) if poses_dir else np.load(f"/tmp/posewatch-movenet/{name}.npy")
        seqs.append(data.Sequence(name, r["label"], r["label"], int(r["reps"]), poses, 15.0))
        seqs[-1].tol = int(r["reps_tolerance"] or 0)
    return seqs


def event_lags(ph, events, fps=15.0):
    """For each event, its time after the end of the labelled repetition it belongs to (the first
    repetition whose far pose is at or after the previous event's and within 1.5 s of it; events
    not matched are left out). Negative: before the end, as counting at the far pose is."""
    marks = [t for t in range(1, len(ph)) if np.isfinite(ph[t]) and np.isfinite(ph[t - 1])
             and np.floor(ph[t] - 0.5) > np.floor(ph[t - 1] - 0.5)]
    ends = {}
    for m in marks:  # the repetition's end: its phase reaches the next integer (back at rest)
        k = np.floor(ph[m] - 0.5) + 1
        e = m
        while e + 1 < len(ph) and np.isfinite(ph[e + 1]) and ph[e] < k:
            e += 1
        ends[m] = e
    out, used = [], set()
    for ev in events:
        cands = [m for m in marks if m not in used and abs(m - ev) <= 1.5 * fps]
        if not cands:
            continue
        m = min(cands, key=lambda m: abs(m - ev))
        used.add(m)
        out.append((ev - ends[m]) / fps)
    return out


def generated(model_dir, kw, hkw, thr, n=60, seed=777):
    """Held-out generated sessions (a seed never trained on), both representations: the labelled
    far-pose crossings inside sets are the truth. Where the generator's idle, talking, walking
    and setting up fill the time between sets (and do not look like Countix's: measured, this set
    is much harder for the rule-based counter than Countix is)."""
    import keras
    models = [keras.models.load_model(os.path.join(d, "model.keras"), compile=False) for d in model_dir.split(",")]
    W = models[0].input_shape[1]
    for share, name in ((0.0, "MoveNet-like"), (1.0, "Countix-like")):
        rng = np.random.default_rng(seed)
        rows = {"net": [], "rules": [], "hybrid": []}
        gts, lags = [], []
        for _ in range(n):
            s = gen.make_sequence(rng, countix_share=share)
            ph = np.where(s["rep"] > 0.5, s["phase"], np.nan)
            ok = np.isfinite(ph[1:]) & np.isfinite(ph[:-1])
            g = int(np.sum(ok & (np.floor(ph[1:] - 0.5) > np.floor(ph[:-1] - 0.5))))
            if g == 0:
                continue
            x = windows(gen.features(s["poses"]), W)
            o = sum(m.predict(x, batch_size=2048, verbose=0) for m in models) / len(models)
            c = counter.count_sequence(s["poses"], data.GENERIC_LABEL)
            ev = [int(round(t * 15.0)) for t, _, _ in c.events]
            gts.append(g)
            ev_net = C.count(o, **kw)
            lags.extend(event_lags(ph, ev_net))
            rows["net"].append(len(ev_net))
            rows["rules"].append(c.session)
            rows["hybrid"].append(len(hybrid(ev, o, thr, fresh=fresh_frames(s["poses"], W), **hkw)))
        for mode, pr in rows.items():
            mae, obo = data.mae_obo(pr, gts)
            signed = np.mean((np.array(pr) - np.array(gts)) / np.array(gts))
            print(f"generated sessions ({name}, seed {seed}): {len(gts)} sequences  {mode:6s} MAE {mae:.3f}  OBO {obo:.3f}  mean signed {signed:+.3f}")
        lags = np.array(lags)
        print(f"  net events matched to a labelled repetition: {len(lags)}; time after that repetition's end: "
              f"median {np.median(lags):+.2f} s, 90th percentile {np.percentile(lags, 90):+.2f} s, share ≤ 1 s {np.mean(lags <= 1.0):.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--set", default="countix", choices=["countix", "penn", "videos", "generated"])
    ap.add_argument("--poses-dir", default=None, help="videos: poses dumped by posewatch replay instead of the stand-in")
    ap.add_argument("--phase", type=int, default=0)
    ap.add_argument("--config", default="")
    ap.add_argument("--hybrid", type=float, default=None)
    ap.add_argument("--hybrid-config", default="look_s=1.0, hold_s=1.0")
    ap.add_argument("--rules-config", default="", help="counter.Config overrides for the rules and the hybrid's events")
    ap.add_argument("--modes", default="net,rules")
    ap.add_argument("--rows", action="store_true")
    ap.add_argument("--fresh", action="store_true")
    a = ap.parse_args()
    kw = eval(f"dict({a.config})", {})
    hkw = eval(f"dict({a.hybrid_config})", {})
    rules_config = evaluate.config_from(a.rules_config)
    modes = a.modes.split(",") + (["hybrid"] if a.hybrid is not None else [])
    window = len_window(a.model)

    def count_for(mode, s, o, label):
        """One sequence's count by the net, the rule-based counter or the hybrid."""
        if mode == "net":
            return len(C.count(o, **kw))
        if mode == "rules":
            return counter.count_sequence(s.poses, label, config=rules_config).session
        return len(hybrid(rule_events(s, label, rules_config), o, a.hybrid, fresh=fresh_frames(s.poses, window), **hkw))

    if a.set == "generated":
        generated(a.model, kw, hkw, a.hybrid if a.hybrid is not None else 0.5)
        return
    if a.set == "countix":
        seqs = data.load_countix(phase=a.phase)
        outs = predict_all(a.model, f"countix{a.phase}", seqs, a.fresh)
        durations = {s.name: len(s.poses) / s.fps for s in seqs}
        for mode in modes:
            print(f"== {mode} {kw if mode == 'net' else ''}{a.hybrid if mode == 'hybrid' else ''} (phase {a.phase})")
            rows = []
            for s, o in zip(seqs, outs):
                rows.append((s.name, s.dataset_label, s.count, count_for(mode, s, o, s.label)))
            evaluate.score_countix(rows, a.rows, durations)
    elif a.set == "penn":
        seqs = data.load_penn()
        outs = predict_all(a.model, "penn", seqs, a.fresh)
        for mode in modes:
            print(f"== {mode}")
            rows = []
            for s, o in zip(seqs, outs):
                label = data.PENN_ACTION.get(s.dataset_label, data.GENERIC_LABEL)
                rows.append((s.name, s.dataset_label, count_for(mode, s, o, label)))
            evaluate.penn_summary(rows)
    else:
        seqs = videos(a.poses_dir)
        outs = predict_all(a.model, "videos" if a.poses_dir is None else "videos_replay", seqs, a.fresh)
        for mode in modes:
            preds, ok, line = [], 0, []
            for s, o in zip(seqs, outs):
                n = count_for(mode, s, o, s.label)
                preds.append(n)
                ok += abs(n - s.count) <= s.tol
                line.append(f"{s.name[:14]}:{n}/{s.count}")
            mae, obo = data.mae_obo(preds, [s.count for s in seqs])
            print(f"== {mode}: videos within tolerance {ok}/{len(seqs)}  MAE {mae:.3f} OBO {obo:.3f}  " + " ".join(line))


if __name__ == "__main__":
    main()
