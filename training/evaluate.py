#!/usr/bin/env python3
"""Evaluate the int8 action classifier (LiteRT, exactly the shipped .tflite) on
 (a) held-out generated data, (b) Penn Action COCO-17 keypoints,
 (r) the generated robustness suite (posegen/suite.py) through replay's decision rules.

    python training/evaluate.py [--model Sources/CActionModel/action_classifier.tflite] [--sections abr]

The dev videos are measured through the product's own path: `training/dev_replay.py` (posewatch replay
with MoveNet). Nothing here trains; ../shared/data is only measured.
"""
import argparse, csv, json, os, sys
from collections import Counter
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np
import normalize as NZ
import tflite_metadata as TM

# ../shared/data beside the package root (never committed, only measured).
SHARED_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data")
PENN = os.path.join(SHARED_DATA, "keypoints", "penn_action_coco17")
PENN_MAP = {"jumping_jacks": "jumping_jacks", "squat": "squats", "pushup": "push_ups"}
PENN_FPS = 30.0
PENN_VISIBLE_SCORE = 0.9   # Penn "visible" flag 1 -> score 0.9; 0 -> 0.0 (eyes/ears are absent: 0)


class Classifier:
    def __init__(self, path):
        from ai_edge_litert.interpreter import Interpreter
        blob = open(path, "rb").read()
        self.meta = TM.read_metadata(blob)
        self.it = Interpreter(model_path=path, num_threads=1)
        self.it.allocate_tensors()
        self.labels = self.meta["labels"]
        # a history model (schema 2, r30) also takes the entries of the previous decisions of the
        # same run and returns this window's entry (training/README.md)
        self.hist = self.meta.get("history")
        io = TM.classifier_io(self.it, self.meta)
        self.i, self.o, self.hi, self.so = io["poses"], io["probs"], io.get("history"), io.get("state")
        self.L = self.meta["window_length"]
        self.fps = self.meta["frame_rate"]
        self.stride = self.meta["stride"]

    def probs(self, raw_windows, sequence=True):
        """raw_windows: (N, L, 17, 3) pixels+score -> (N, C) probabilities. A history model sees the
        windows as consecutive decisions of one run (history empty before the first) if `sequence`,
        else each window alone (empty history)."""
        Z = NZ.normalize_windows(raw_windows)
        out = np.zeros((len(Z), len(self.labels)), np.float32)
        h = np.zeros(self.hist["shape"], np.float32) if self.hist else None
        for n, z in enumerate(Z):
            self.it.set_tensor(self.i, z[None])
            if self.hist:
                self.it.set_tensor(self.hi, h if sequence else np.zeros_like(h))
            self.it.invoke()
            out[n] = self.it.get_tensor(self.o)[0]
            if self.hist:
                h = np.concatenate([h[:, 1:], self.it.get_tensor(self.so)[None]], 1)
        return out


def confusion(labels, y, p):
    C = np.zeros((len(labels), len(labels)), int)
    for a, b in zip(y, p):
        C[a, b] += 1
    return C


def print_cm(title, labels, y, p):
    y, p = np.asarray(y), np.asarray(p)
    acc = float(np.mean(y == p)) if len(y) else float("nan")
    print(f"\n== {title}: accuracy {acc*100:.1f}% ({int(np.sum(y == p))}/{len(y)})")
    C = confusion(labels, y, p)
    short = [l[:8] for l in labels]
    print("truth \\ pred  " + " ".join(f"{s:>8}" for s in short) + "   recall")
    for i, l in enumerate(labels):
        n = C[i].sum()
        if n == 0:
            continue
        print(f"{l:>13} " + " ".join(f"{v:8d}" for v in C[i]) + f"   {C[i, i] / n * 100:5.1f}%")
    return acc


def windows_over(k, L, stride, pad="loop"):
    """all windows of a (T,17,3) sequence at the given stride; sequences shorter than L become one
    window: pad='loop' repeats the clip cyclically, pad='zero' puts it at the end after empty poses."""
    T = len(k)
    if T >= L:
        return np.stack([k[s:s + L] for s in range(0, T - L + 1, stride)])
    if pad == "loop":
        return k[np.arange(L) % T][None]
    w = np.zeros((1, L, 17, 3), np.float32)
    w[0, L - T:] = k
    return w


def section_a(clf, seed, clips):
    sys.path.insert(0, HERE)
    from posegen.dataset import make_windows
    rng = np.random.default_rng(seed)
    X, y, _ = make_windows(rng, clips, clf.L, clf.fps, per_clip=3)
    p = clf.probs(X, sequence=False).argmax(1)  # independent windows: a history model sees none
    return print_cm(f"(a) held-out generated windows (seed {seed}, {clips} clips)", clf.labels, y, p)


def load_penn():
    rows = list(csv.DictReader(open(os.path.join(PENN, "index.csv"))))
    for r in rows:
        k = np.load(os.path.join(PENN, r["action"], r["id"] + ".npy")).astype(np.float32)
        k = k.copy()
        k[..., 2] = np.where(k[..., 2] > 0, PENN_VISIBLE_SCORE, 0.0)
        step = PENN_FPS / 15.0
        idx = np.round(np.arange(0, len(k) / step) * step).astype(int)
        idx = idx[idx < len(k)]
        yield r, k[idx]


def section_b(clf):
    labels = clf.labels
    res = {}
    for pad in ("loop", "zero"):
        ys, ps, full_y, full_p, clip_y, clip_p = [], [], [], [], [], []
        per_action = Counter(); per_action_ok = Counter()
        for r, k in load_penn():
            lab = labels.index(PENN_MAP.get(r["action"], "other"))
            W = windows_over(k, clf.L, clf.stride, pad)
            pr = clf.probs(W)
            p = pr.argmax(1)
            ys += [lab] * len(p); ps += list(p)
            if len(k) >= clf.L:
                full_y += [lab] * len(p); full_p += list(p)
            clip_y.append(lab); clip_p.append(int(pr.mean(0).argmax()))
            per_action[r["action"]] += len(p); per_action_ok[r["action"]] += int(np.sum(p == lab))
        acc = print_cm(f"(b) Penn Action windows, clips shorter than the window padded by '{pad}'", labels, ys, ps)
        print("per Penn class:", ", ".join(f"{a} {per_action_ok[a]/per_action[a]*100:.1f}%" for a in sorted(per_action)))
        if pad == "loop":
            print_cm("(b') Penn windows from clips at least one window long (no padding)", labels, full_y, full_p)
            print_cm("(b'') Penn per clip (mean probability over the clip's windows)", labels, clip_y, clip_p)
        res[pad] = acc
    return res


class ReplayPolicy:
    """posewatch's decision rules (Sources/Actions/DecisionPolicy.swift with the appliance's defaults:
    threshold 0.6, present share 0.6, exponential smoothing 0.5, 3 confirmations, 1 promotion) and
    ActionPipeline's history rule (cleared whenever a window is not classified)."""

    def __init__(self, labels, threshold=0.6, present=0.6, smoothing=0.5, confirmations=3, promote=1):
        self.labels, self.threshold, self.present = labels, threshold, present
        self.smoothing, self.confirmations = smoothing, confirmations
        # windows an action needs after `low_confidence` whose best guess was that same label (r34;
        # DecisionPolicy.promotions; before r34 the full confirmations)
        self.promote = min(promote, confirmations)

    def run(self, clf, k, size=None):
        """k (T,17,3) one clip's keypoints from its first frame -> list of (t seconds, decision name),
        one per stride once the window is full, as `posewatch replay` reports them."""
        L, stride, fps = clf.L, clf.stride, clf.fps
        present = (k[..., 2] >= 0.2).any(-1)  # the tracker drops a pose with no joint >= 0.2
        h = np.zeros(clf.hist["shape"], np.float32) if clf.hist else None
        smoothed, reported, best_guess, cand, runs, out = None, "starting_up", None, None, 0, []
        ends = list(range(L, len(k) + 1, stride))
        Z = NZ.normalize_windows(np.stack([k[e - L:e] for e in ends])) if ends else []
        for e, z in zip(ends, Z):
            share = present[e - L:e].mean()
            if share < self.present:
                if h is not None:
                    h[:] = 0
                smoothed, reported, cand, runs = None, "no_person", None, 0
                out.append(((e - 1) / fps, reported))
                continue
            clf.it.set_tensor(clf.i, z[None])
            if h is not None:
                clf.it.set_tensor(clf.hi, h)
            clf.it.invoke()
            pr = clf.it.get_tensor(clf.o)[0].copy()
            if h is not None:
                h = np.concatenate([h[:, 1:], clf.it.get_tensor(clf.so)[None]], 1)
            smoothed = pr if smoothed is None else self.smoothing * smoothed + (1 - self.smoothing) * pr
            b = int(smoothed.argmax())
            dec = self.labels[b] if smoothed[b] >= self.threshold else "low_confidence"
            if dec == reported:
                cand, runs = None, 0
            elif reported == "starting_up":
                reported, cand, runs = dec, None, 0
            else:
                runs = runs + 1 if cand == dec else 1
                cand = dec
                need = self.promote if reported == "low_confidence" and dec == best_guess else self.confirmations
                if runs >= need:
                    reported, cand, runs = dec, None, 0
            if reported == "low_confidence" and dec == "low_confidence":
                best_guess = self.labels[b]  # the reported low_confidence's best guess, refreshed
            out.append(((e - 1) / fps, reported))
        return out


class Replay:
    """the suite's clips through the real `posewatch replay` (tracker, window, history, decision
    rules; --classifier-model picks the model) instead of ReplayPolicy's transcription."""

    def __init__(self, posewatch, model=None, extra=()):
        import tempfile
        self.cmd = [posewatch, "replay"]
        self.extra = (["--classifier-model", model] if model else []) + list(extra)
        self.tmp = os.path.join(tempfile.mkdtemp(prefix="posewatch-suite-"), "clip.npy")
        self.threshold, self.smoothing, self.confirmations = "config", "config", "config"

    def run(self, clf, k, size):
        import subprocess
        np.save(self.tmp, k)
        r = subprocess.run(self.cmd + [self.tmp, "--fps", f"{clf.fps:g}", "--frame-size", f"{size[0]}x{size[1]}",
                                       "--format", "jsonl"] + self.extra, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"posewatch replay exited {r.returncode}: {r.stderr.strip()}")
        out = []
        for line in r.stdout.splitlines():
            d = json.loads(line)
            if "label" in d and "event" not in d and "summary" not in d:
                out.append((d["t"], d["label"]))
        return out


def section_robustness(clf, seed, per_cell, only=None, policy=None):
    """the generated robustness suite (posegen/suite.py), each clip through `policy` as replay runs it.
    Per cell: sets whose majority decision is right (the dev spans' rule) over the decisions whose
    window is mostly the set's frames, the share of those decisions that are right, and the time from the set's first repetition to the
    first correct decision (median; a set never named right counts its whole length)."""
    from posegen import suite as S
    import statistics
    policy = policy or ReplayPolicy(clf.labels)
    rows, all_first, worst = [], [], []
    print(f"\n== robustness suite: {per_cell} sets per cell, seeds {seed}+ (disjoint from training), "
          f"decisions as replay makes them (threshold {policy.threshold}, smoothing {policy.smoothing}, "
          f"{policy.confirmations} confirmations)")
    print(f"{'exercise':14} {'factor':8} {'value':16} {'sets':>6} {'decis.':>7} {'first s':>8}  wrong sets (majority)")
    for ci, (ex, factor, value) in enumerate(S.cells()):
        if only and not any(o in f"{ex}/{factor}/{value}" for o in only):
            continue
        rng = np.random.default_rng([seed, ci])
        ok, dec_ok, dec_n, firsts, wrong = 0, 0, 0, [], Counter()
        for _ in range(per_cell):
            k, truth, start, size = S.make_cell_clip(rng, ex, factor, value, clf.fps)
            decs = policy.run(clf, k, size)
            T = len(truth)
            lab = clf.labels.index(ex)
            # a decision counts for the set when most of its window's frames are the exercise (the
            # recipe's window label): the window, not the instant, is what it judges
            ins = [(t, d) for t, d in decs
                   if np.mean(truth[max(0, int(round(t * clf.fps)) + 1 - clf.L):int(round(t * clf.fps)) + 1] == lab) >= 0.5]
            if ex == "other":
                ins = decs
            ins = [(t, d) for t, d in ins if d != "starting_up"]  # before the first full window
            names = Counter(d for _, d in ins if d != "starting_up")
            maj = sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if names else "starting_up"
            ok += maj == ex
            if maj != ex:
                wrong[maj] += 1
            dec_ok += sum(d == ex for _, d in ins); dec_n += len(ins)
            if start is not None:
                hit = next((t for t, d in decs if t >= start and d == ex), None)
                firsts.append((hit if hit is not None else T / clf.fps) - start)
        med = statistics.median(firsts) if firsts else float("nan")
        all_first += firsts
        acc = ok / per_cell
        rows.append((ex, factor, value, acc, dec_ok / max(dec_n, 1), med))
        print(f"{ex:14} {factor:8} {value:16} {acc*100:5.1f}% {dec_ok/max(dec_n,1)*100:6.1f}% {med:8.2f}  "
              + ", ".join(f"{n}:{c}" for n, c in wrong.most_common()), flush=True)
    cells_ok = sum(r[3] >= 0.95 for r in rows)
    print(f"cells with >= 95 % of sets right: {cells_ok}/{len(rows)}; mean set accuracy "
          f"{np.mean([r[3] for r in rows])*100:.1f}%, mean decision accuracy {np.mean([r[4] for r in rows])*100:.1f}%")
    if all_first:
        print(f"time to the first correct label from the set's first repetition: median {statistics.median(all_first):.2f} s "
              f"(mean {np.mean(all_first):.2f} s, 90th percentile {np.percentile(all_first, 90):.2f} s, {len(all_first)} sets)")
    return {"cells_ok": cells_ok, "cells": len(rows), "median_first_s": statistics.median(all_first) if all_first else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "..", "Sources", "CActionModel", "action_classifier.tflite"))
    ap.add_argument("--sections", default="ab")
    ap.add_argument("--gen-seed", type=int, default=777001)
    ap.add_argument("--gen-clips", type=int, default=1500)
    ap.add_argument("--suite-seed", type=int, default=9100000, help="robustness suite (section r) base seed")
    ap.add_argument("--suite-sets", type=int, default=40, help="robustness suite: sets per cell")
    ap.add_argument("--suite-posewatch", metavar="BIN", help="robustness suite: decisions from `BIN replay` on each "
                    "clip's keypoints (with --model as --classifier-model) instead of the Python transcription")
    ap.add_argument("--policy-threshold", type=float, default=0.6, help="robustness suite, Python rules: confidence threshold")
    ap.add_argument("--policy-confirmations", type=int, default=3, help="robustness suite, Python rules: confirmations")
    ap.add_argument("--policy-promote", type=int, default=1, help="robustness suite, Python rules: confirmations from "
                    "low_confidence to the action that was its best guess (DecisionPolicy.promotions; 3 = before r34)")
    ap.add_argument("--suite-only", nargs="*", help="robustness suite: only cells whose exercise/factor/value contains one of these")
    a = ap.parse_args()
    if a.suite_posewatch and not os.access(a.suite_posewatch, os.X_OK):
        print(f"{a.suite_posewatch}: not an executable posewatch (swift build -c release --product posewatch)", file=sys.stderr)
        return 2
    clf = Classifier(a.model)
    print("model", a.model, os.path.getsize(a.model), "bytes; labels", clf.labels, "fps", clf.fps,
          "window", clf.L, "stride", clf.stride)
    if clf.hist:
        print(f"history model: {clf.hist['length']} previous decisions; (a) windows alone (empty history), "
              "(b) each Penn clip's windows in order")
    summary = {}
    if "a" in a.sections:
        summary["a_generated_window_acc"] = section_a(clf, a.gen_seed, a.gen_clips)
    if "b" in a.sections:
        if os.path.isdir(PENN):
            summary["b_penn_window_acc"] = section_b(clf)
        else:
            print("(b) skipped: no", PENN)
    if "r" in a.sections:
        policy = (Replay(a.suite_posewatch, a.model) if a.suite_posewatch else
                  ReplayPolicy(clf.labels, threshold=a.policy_threshold, confirmations=a.policy_confirmations,
                               promote=a.policy_promote))
        summary["r_robustness"] = section_robustness(clf, a.suite_seed, a.suite_sets, a.suite_only, policy)
    print("\nSUMMARY", json.dumps(summary))


if __name__ == "__main__":
    sys.exit(main())
