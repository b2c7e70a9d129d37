"""The generated detector model measured against MoveNet on real clips (issue 41's decision 1).

The generated sessions (`training/counter/sessions.py`) see their motion through a detector model
(`posegen.detector`). This tool measures what posewatch's own pose stage gives on the real clips in
`../shared/data/videos` and what the detector model gives on generated sessions, with the same
statistics, so the model can be fitted to MoveNet and checked on clips it was not fitted on.

Real poses come from `Tests/PoseEstimationTests/Scripts/posewatch_pose.py` (posewatch's estimator
step for step: the same 192×192 tensors as the Swift code, smart cropping, the presence rule; LiteRT
runs MoveNet) at 15 fps over each clip's labelled span (a whole clip where labels.csv gives none).
The people search of issue 43 is not in the port; these clips show one person.

The halves are split by source (the file name's prefix: a source films its people in one way):
`fit` = workouttracker, wahoo, social, pushup; `check` = ucf101, stock, quva, other/, variants/.

No ground truth exists for the real clips, so every statistic is one that both sides give from the
keypoints alone (the generated sets' frames, where the person exercises in place):

* scores per joint group given the person's height in the frame (the box of joints scoring ≥ 0.3,
  as a share of the frame's height) — quantiles and the share under the counter's 0.3;
* jitter given the score: |p[t+1] − 2 p[t] + p[t−1]| in torso lengths, for keypoints scoring in a
  band on the three frames (it holds the motion too: the generated motion is the real exercises');
* time: the lag-1 and lag-5 autocorrelation of a joint's score, and how long a joint stays under 0.3;
* dropouts: frames on which the estimator reports nobody, their share and their runs' lengths;
* left/right swaps: frames on which a pair's two joints fit the previous frame better crossed than
  as labelled (by more than a fifth of the pair's separation), per frame and pair.

    python training/posegen/calibration.py extract            # real poses -> /tmp/posewatch-real-poses (about 10 min)
    python training/posegen/calibration.py compare [--noise calibrated|harsh] [--sessions 24]

Needs numpy, ffmpeg and ai-edge-litert (extract); compare needs only numpy and the extracted poses.
"""
from __future__ import annotations

import argparse
import copy
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
VIDEOS = os.path.join(ROOT, "..", "shared", "data", "videos")
CACHE = "/tmp/posewatch-real-poses"
FPS = 15
MIN_SCORE = 0.3
GROUPS = [("face", [0, 1, 2, 3, 4]), ("shoulders", [5, 6]), ("elbows", [7, 8]), ("wrists", [9, 10]),
          ("hips", [11, 12]), ("knees", [13, 14]), ("ankles", [15, 16])]
SWAP_PAIRS = [("shoulders", 5, 6), ("elbows", 7, 8), ("wrists", 9, 10), ("hips", 11, 12), ("knees", 13, 14),
              ("ankles", 15, 16)]
HEIGHT_BINS = [(0.0, 0.45, "small"), (0.45, 0.75, "medium"), (0.75, 9.0, "large")]  # share of the frame's height
SCORE_BANDS = [(0.3, 0.5), (0.5, 0.7), (0.7, 1.01)]
FIT_SOURCES = ("workouttracker", "wahoo", "social", "pushup")


def source_of(name):
    """The clip's source: its folder (other/, variants/, workouttracker/) or its name's prefix."""
    if "/" in name:
        return name.split("/")[0]
    return name.split("_")[0].rstrip("0123456789").split(".")[0]


def half_of(name):
    return "fit" if source_of(name) in FIT_SOURCES else "check"


# MARK: real poses

def clips():
    with open(os.path.join(VIDEOS, "labels.csv")) as f:
        for row in csv.DictReader(f):
            start = float(row["active_from_s"]) if row["active_from_s"] else None
            end = float(row["active_to_s"]) if row["active_to_s"] else None
            yield row["file"], start, end


def extract(out):
    sys.path.insert(0, os.path.join(ROOT, "Tests", "PoseEstimationTests", "Scripts"))
    import posewatch_pose as pp
    os.makedirs(out, exist_ok=True)
    runner = pp.interpreter(reference=False)
    for name, start, end in clips():
        path = os.path.join(out, name.replace("/", "__") + ".npz")
        if os.path.exists(path):
            continue
        estimator = pp.Estimator(runner, smart_cropping=True)
        rows, size = [], None
        duration = None if start is None else end - start
        for luma, cb, cr, full in pp.y4m_stream(os.path.join(VIDEOS, name), start=start, duration=duration, fps=FPS):
            size = (luma.shape[1], luma.shape[0])
            _, _, _, _, person = estimator.estimate(luma, cb, cr, full)
            rows.append(person if person is not None else np.zeros((17, 3), np.float32))
        np.savez(path, poses=np.stack(rows).astype(np.float32), size=np.array(size), name=name)
        print(f"{name}: {len(rows)} frames {size[0]}x{size[1]}", flush=True)


def load_real(directory):
    """[(name, poses[T,17,3] (zero rows: nobody), (W, H))] of the extracted clips."""
    found = []
    for file in sorted(os.listdir(directory)):
        if file.endswith(".npz"):
            data = np.load(os.path.join(directory, file))
            found.append((str(data["name"]), data["poses"].astype(np.float64), tuple(int(v) for v in data["size"])))
    return found


# MARK: statistics (the same code for real and generated keypoints)

def _torso(poses):
    shoulders = (poses[:, 5, :2] + poses[:, 6, :2]) / 2
    hips = (poses[:, 11, :2] + poses[:, 12, :2]) / 2
    return np.hypot(*(shoulders - hips).T)


def _height(poses, frame_height):
    """The box of joints scoring ≥ 0.3 as a share of the frame's height (NaN: nobody)."""
    ok = poses[..., 2] >= MIN_SCORE
    ys = np.where(ok, poses[..., 1], np.nan)
    with np.errstate(all="ignore"):
        return (np.nanmax(ys, 1) - np.nanmin(ys, 1)) / frame_height


def _segments(mask):
    """(starts, lengths) of the runs of True in a 1-D mask."""
    padded = np.concatenate([[0], mask.astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return edges[::2], edges[1::2] - edges[::2]


def _runs(mask):
    """Lengths of the runs of True in a 1-D mask."""
    return _segments(mask)[1]


class Tally:
    """Accumulates the statistics over sequences; `table()` gives the figures."""

    def __init__(self):
        self.scores = {(g, h): [] for g, _ in GROUPS for h in range(len(HEIGHT_BINS))}
        self.jitter = {b: [] for b in range(len(SCORE_BANDS))}
        self.ac1, self.ac5, self.low_runs = [], [], []
        self.frames = self.nobody = 0
        self.nobody_runs = []
        self.swaps = self.swap_checks = 0

    def add(self, poses, size):
        """poses [T,17,3] at 15 fps, the person present throughout (zero rows: the estimator saw nobody)."""
        person = poses[..., 2].max(1) > 0
        self.frames += len(poses)
        self.nobody += int((~person).sum())
        self.nobody_runs += list(_runs(~person))
        height = _height(poses, size[1])
        for h, (lo, hi, _) in enumerate(HEIGHT_BINS):
            rows = person & (height >= lo) & (height < hi)
            for g, joints in GROUPS:
                self.scores[(g, h)].append(poses[rows][:, joints, 2].ravel())
        scores = poses[..., 2]
        ok = (scores[:-2] >= MIN_SCORE) & (scores[1:-1] >= MIN_SCORE) & (scores[2:] >= MIN_SCORE)
        acc = np.hypot(*(poses[2:, :, :2] - 2 * poses[1:-1, :, :2] + poses[:-2, :, :2]).transpose(2, 0, 1))
        torso = _torso(poses)[1:-1, None]
        ok &= np.isfinite(torso) & (torso > 1) & person[1:-1, None]
        middle = np.minimum(np.minimum(scores[:-2], scores[1:-1]), scores[2:])
        for b, (lo, hi) in enumerate(SCORE_BANDS):
            sel = ok & (middle >= lo) & (middle < hi)
            self.jitter[b].append((acc / np.maximum(torso, 1e-6))[sel])
        present = list(zip(*_segments(person)))
        for joint in range(5, 17):  # the body's joints (the counter's)
            for start, length in present:
                series = scores[start:start + length, joint]
                if length >= 30 and series.std() > 1e-6:
                    self.ac1.append(_autocorrelation(series, 1))
                    self.ac5.append(_autocorrelation(series, 5))
                self.low_runs += list(_runs(series < MIN_SCORE))
        for _, a, b in SWAP_PAIRS:
            both = person[1:] & person[:-1] & (scores[1:, a] >= MIN_SCORE) & (scores[1:, b] >= MIN_SCORE) \
                & (scores[:-1, a] >= MIN_SCORE) & (scores[:-1, b] >= MIN_SCORE)
            la, lb = poses[1:, a, :2], poses[1:, b, :2]
            pa, pb = poses[:-1, a, :2], poses[:-1, b, :2]
            straight = np.hypot(*(la - pa).T) + np.hypot(*(lb - pb).T)
            crossed = np.hypot(*(la - pb).T) + np.hypot(*(lb - pa).T)
            separation = np.hypot(*(pa - pb).T)
            self.swap_checks += int(both.sum())
            self.swaps += int((both & (crossed + 0.2 * separation < straight)).sum())

    def table(self):
        """{statistic name: value} — the figures compared between real and generated."""
        t = {}
        for (g, h), parts in self.scores.items():
            values = np.concatenate(parts) if parts else np.zeros(0)
            if len(values) < 200:
                continue
            q = np.percentile(values, [10, 50, 90])
            t[f"score {g} {HEIGHT_BINS[h][2]}: p10/p50/p90"] = q
            t[f"score {g} {HEIGHT_BINS[h][2]}: share < 0.3"] = np.array([np.mean(values < MIN_SCORE)])
        for b, parts in self.jitter.items():
            values = np.concatenate(parts)
            lo, hi = SCORE_BANDS[b]
            t[f"jitter, score {lo:.1f}-{min(hi, 1):.1f}: p50/p90 (torso lengths)"] = np.percentile(values, [50, 90])
        t["score autocorrelation, lag 1 / lag 5 frames (median)"] = np.array([np.median(self.ac1), np.median(self.ac5)])
        runs = np.array(self.low_runs or [0])
        t["a joint under 0.3: run length p50/p90 (frames)"] = np.percentile(runs, [50, 90])
        t["nobody reported: share of frames"] = np.array([self.nobody / max(self.frames, 1)])
        runs = np.array(self.nobody_runs or [0])
        t["nobody reported: run length mean (frames)"] = np.array([runs.mean()])
        t["left/right swaps per 1000 pair-frames"] = np.array([1000 * self.swaps / max(self.swap_checks, 1)])
        return t


def _autocorrelation(series, lag):
    x = series - series.mean()
    return float((x[lag:] * x[:-lag]).sum() / max((x * x).sum(), 1e-12))


def real_tally(directory, half):
    tally = Tally()
    count = 0
    for name, poses, size in load_real(directory):
        if half_of(name) == half:
            tally.add(poses, size)
            count += 1
    return tally, count


def generated_tally(noise, seeds, params=None):
    """The sets of generated sessions (the person exercising in place) through the detector model
    (`params`: the calibrated model's parameters to use instead of its fitted ones)."""
    sys.path.insert(0, os.path.join(HERE, "..", "counter"))
    import sessions
    tally = Tally()
    for seed in seeds:
        keypoints, annotation = sessions.make_session(seed, noise=noise, detector_params=params)
        for s in annotation["sets"]:
            a, b = int(round(s["reps"][0][0] * FPS)), int(round(s["reps"][-1][1] * FPS))
            tally.add(keypoints[a:b].astype(np.float64), tuple(annotation["frame_size"]))
    return tally


def distance(real, generated):
    """How far the generated statistics are from the real ones: scores (quantiles, shares,
    autocorrelations) in units of 0.05, the rest (jitter, run lengths, rates) as log ratios in units
    of 0.2."""
    total = 0.0
    for name, r in real.items():
        if name not in generated:
            continue
        g = generated[name]
        if name.startswith("score "):
            total += float(np.sum(((g - r) / 0.05) ** 2))
        else:
            total += float(np.sum((np.log((g + 1e-3) / (r + 1e-3)) / 0.2) ** 2))
    return total


# The fit's step per parameter; list-valued ones (one value per joint group) step each value, with a floor.
LIST_STEPS = dict(base=(0.15, -1e9), miss=(0.01, 0.0))
STEPS = dict(miss_drop=0.5, size_slope=0.25, session_sd=0.1, joint_sd=0.1, frame_sd=0.1, frame_rho=0.1, occlusion=0.25,
             jitter=0.003, jitter_low=0.5, jitter_rho=0.1, stray_rate=0.01, swap_rate=0.002, swap_frames=0.5,
             lost_rate=0.001)
LIMITS = dict(frame_rho=(0.0, 0.95), jitter_rho=(0.0, 0.95))


def fit(args):
    """Coordinate descent on the fit half: each parameter (and each group's base logit) moved by its
    step either way while that lowers the distance; the same sessions every time."""
    from posegen import detector
    real, count = real_tally(args.poses, "fit")
    target = real.table()
    seeds = range(2325000, 2325000 + args.sessions)
    params = copy.deepcopy(detector.CALIBRATED)

    def loss(candidate):
        return distance(target, generated_tally("calibrated", seeds, candidate).table())

    best = loss(params)
    print(f"fit half: {count} clips; start distance {best:.1f}", flush=True)
    for round_ in range(args.rounds):
        improved = False
        keys = [(k, g) for k in LIST_STEPS for g in range(len(GROUPS))] + [(k, None) for k in STEPS]
        for key, group in keys:
            for sign in (1, -1):
                while True:
                    candidate = copy.deepcopy(params)
                    if group is not None:
                        step, floor = LIST_STEPS[key]
                        candidate[key][group] = round(max(candidate[key][group] + sign * step, floor), 4)
                        moved = candidate[key][group] != params[key][group]
                    else:
                        lo, hi = LIMITS.get(key, (0.0, 1e9))
                        candidate[key] = round(min(max(candidate[key] + sign * STEPS[key], lo), hi), 5)
                        moved = candidate[key] != params[key]
                    if not moved:
                        break
                    value = loss(candidate)
                    if value < best - 1e-9:
                        best, params, improved = value, candidate, True
                    else:
                        break
        print(f"round {round_ + 1}: distance {best:.1f}", flush=True)
        if not improved:
            break
    print("CALIBRATED = dict(")
    for k, v in params.items():
        print(f"    {k}={v!r},")
    print(")")


def compare(args):
    rows = []
    for half, seeds in (("fit", range(2325000, 2325000 + args.sessions)), ("check", range(2326000, 2326000 + args.sessions))):
        real, count = real_tally(args.poses, half)
        generated = generated_tally(args.noise, seeds)
        rows.append((half, count, real.table(), generated.table()))
    print(f"detector model '{args.noise}' vs posewatch's pose stage on real clips; generated: {args.sessions} sessions' sets per half")
    print(f"{'statistic':64} {'real fit':>17} {'generated':>17}   {'real check':>17} {'generated':>17}")
    names = list(rows[0][2])
    for name in names:
        cells = []
        for _, _, real, generated in rows:
            for table in (real, generated):
                cells.append(" / ".join(f"{v:.3g}" for v in table[name]) if name in table else "-")
        print(f"{name:64} {cells[0]:>17} {cells[1]:>17}   {cells[2]:>17} {cells[3]:>17}")
    print(f"clips: fit {rows[0][1]}, check {rows[1][1]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("extract", help="posewatch's pose stage over the real clips (LiteRT)")
    p.add_argument("--out", default=CACHE)
    p = sub.add_parser("fit", help="fit the calibrated model's parameters on the fit half")
    p.add_argument("--poses", default=CACHE)
    p.add_argument("--sessions", type=int, default=16)
    p.add_argument("--rounds", type=int, default=4)
    p = sub.add_parser("compare", help="real vs generated statistics, both halves")
    p.add_argument("--poses", default=CACHE)
    p.add_argument("--noise", default="calibrated", choices=["calibrated", "harsh"])
    p.add_argument("--sessions", type=int, default=24)
    args = parser.parse_args()
    if args.command == "extract":
        if not os.path.isdir(VIDEOS):
            print(f"calibration: {VIDEOS} is absent; nothing to measure")
            return
        extract(args.out)
    elif args.command == "fit":
        fit(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
