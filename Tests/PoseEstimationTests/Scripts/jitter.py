#!/usr/bin/env python3
"""Keypoint jitter with and without One Euro smoothing (KeypointSmoother), and the lag it costs.

Developers run this; CI does not. Poses come from posewatch's estimator as deployed (smart cropping,
presence rule; posewatch_pose.py, bit-exact with the Swift estimator on the preprocessing; LiteRT
XNNPACK kernels) at 15 fps on the ten dev clips:

* still: the spans labels.csv's notes call "standing idle" (wahoo_jumping_jacks 6.3-11 s,
  wahoo_squats 6-10.5 s), trimmed by 0.3 s: any movement there is the model's jitter;
* action: every clip's labelled action span.

Jitter is the mean frame-to-frame acceleration (second difference) of a keypoint's position,
|p[t+1] - 2 p[t] + p[t-1]|, in torso lengths (shoulder midpoint to hip midpoint of the raw pose at
t), over keypoints scoring at least 0.3 in the three frames. Lag is the delay (ms) that best aligns
the smoothed track with the raw one during the action spans (least squares over shifts of 0-6
frames in steps of 0.05, raw interpolated linearly), and "dev" the mean distance between smoothed and raw keypoints
there, in torso lengths (what smoothing moves a keypoint away from the model's answer); lag and
dev are means over the ten clips, "max" the largest clip's lag. "body" betas measure speed in body
lengths per second (KeypointSmoother), "px" betas in pixels per second (its former definition).

The smoother port (posewatch_pose.OneEuro) follows KeypointSmoother.swift; a fixture test
(KeypointSmootherTests) holds the Swift filter to the port's output.

  /work/venv/bin/python Tests/PoseEstimationTests/Scripts/jitter.py [--grid] [--per-clip]
"""
import argparse
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import posewatch_pose as pp  # noqa: E402

FPS = 15
SCORE = 0.3
STILL = [("wahoo_jumping_jacks.mp4", 6.6, 10.7), ("wahoo_squats.mp4", 6.3, 10.2)]
CACHE = "/tmp/posewatch-jitter-poses.npz"


def poses_for(runner, clip, start, end):
    """[frames, 17, 3] keypoints (NaN rows: nobody) from the estimator with smart cropping."""
    estimator = pp.Estimator(runner, smart_cropping=True)
    rows = []
    for luma, cb, cr, full in pp.y4m_stream(os.path.join(pp.VIDEOS, clip), start=start, duration=end - start, fps=FPS):
        _, _, _, _, person = estimator.estimate(luma, cb, cr, full)
        rows.append(person if person is not None else np.full((17, 3), np.nan, dtype=np.float32))
    return np.stack(rows).astype(np.float64)


def smooth(poses, min_cutoff, beta, per_pixel=False):
    smoother = pp.OneEuro(min_cutoff=min_cutoff, beta=beta, per_pixel=per_pixel)
    out = poses.copy()
    for t, pose in enumerate(poses):
        if not np.isnan(pose[0, 0]):
            out[t] = smoother.smooth(pose, t / FPS)
    return out


def torso(poses):
    shoulders = (poses[:, pp.L_SHOULDER, :2] + poses[:, pp.R_SHOULDER, :2]) / 2
    hips = (poses[:, pp.L_HIP, :2] + poses[:, pp.R_HIP, :2]) / 2
    return np.hypot(*(shoulders - hips).T)


def jitter(raw, track):
    """Mean |second difference| in torso lengths, and how many keypoint triples it averages."""
    scores = raw[:, :, 2]
    ok = (scores[:-2] >= SCORE) & (scores[1:-1] >= SCORE) & (scores[2:] >= SCORE)
    acceleration = np.hypot(*(track[2:, :, :2] - 2 * track[1:-1, :, :2] + track[:-2, :, :2]).transpose(2, 0, 1))
    size = torso(raw)[1:-1, None]
    ok &= np.isfinite(size) & (size > 0)
    values = acceleration[ok] / np.broadcast_to(size, ok.shape)[ok]
    return float(values.mean()), int(ok.sum())


def lag_and_deviation(raw, track):
    """Delay (ms) aligning track with raw, and mean |track - raw| in torso lengths."""
    ok = raw[:, :, 2] >= SCORE
    size = torso(raw)[:, None]
    valid = ok & np.isfinite(size) & (size > 0)
    deviation = np.hypot(*(track[:, :, :2] - raw[:, :, :2]).transpose(2, 0, 1))
    dev = float((deviation[valid] / np.broadcast_to(size, valid.shape)[valid]).mean())
    # Track at t against raw at t - shift, raw linearly interpolated at fractional shifts.
    shifts = np.arange(0, 6.01, 0.05)
    errors = []
    for shift in shifts:
        whole, fraction = int(shift), shift - int(shift)
        n = len(raw) - whole - 1
        earlier = raw[: n] * fraction + raw[1: n + 1] * (1 - fraction)  # raw at (t - shift) for t = whole + 1 …
        later = track[whole + 1: whole + 1 + n]
        both = valid[: n] & valid[1: n + 1] & valid[whole + 1: whole + 1 + n]
        d = (later[:, :, :2] - earlier[:, :, :2]) / np.broadcast_to(size[whole + 1: whole + 1 + n], both.shape)[..., None]
        errors.append(float((d[both] ** 2).sum(axis=-1).mean()))
    best = shifts[int(np.argmin(errors))]
    return best * 1000 / FPS, dev


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", action="store_true", help="also try other cutoffs and betas")
    parser.add_argument("--per-clip", action="store_true", help="lag per clip for the former and the current defaults")
    parser.add_argument("--refresh", action="store_true", help=f"recompute poses instead of reading {CACHE}")
    args = parser.parse_args()
    labels = [row for row in csv.DictReader(open(os.path.join(pp.VIDEOS, "labels.csv"))) if row["active_from_s"]]
    if os.path.exists(CACHE) and not args.refresh:
        cached = np.load(CACHE, allow_pickle=True)
        still, action = list(cached["still"]), list(cached["action"])
    else:
        runner = pp.interpreter(reference=False)
        still = [poses_for(runner, clip, start, end) for clip, start, end in STILL]
        action = [poses_for(runner, row["file"], float(row["active_from_s"]), float(row["active_to_s"])) for row in labels]
        def objects(arrays):
            holder = np.empty(len(arrays), dtype=object)
            holder[:] = arrays
            return holder
        np.savez(CACHE, still=objects(still), action=objects(action))

    def evaluate(min_cutoff, beta, per_pixel=False):
        result = {}
        for name, clips in (("still", still), ("action", action)):
            tracks = [(raw, raw if min_cutoff is None else smooth(raw, min_cutoff, beta, per_pixel)) for raw in clips]
            weights = [jitter(raw, track) for raw, track in tracks]
            total = sum(n for _, n in weights)
            result[name] = sum(j * n for j, n in weights) / total
            if name == "action":
                lags = [lag_and_deviation(raw, track) for raw, track in tracks]
                result["lag"] = float(np.mean([lag for lag, _ in lags]))
                result["lag_max"] = float(np.max([lag for lag, _ in lags]))
                result["dev"] = float(np.mean([dev for _, dev in lags]))
        return result

    frames_still = sum(len(c) for c in still)
    frames_action = sum(len(c) for c in action)
    print(f"Jitter at {FPS} fps: still {frames_still} frames (2 idle spans), action {frames_action} frames (10 clips)")
    print("jitter = mean |second difference| in torso lengths; lag ms; dev = mean |smoothed - raw| in torso lengths")
    print(f"{'smoothing':<40} {'still':>7} {'action':>7} {'lag':>4} {'max':>4} {'dev':>6}")
    base = evaluate(None, None)
    print(f"{'off':<40} {base['still']:>7.4f} {base['action']:>7.4f} {0:>4.0f} {0:>4.0f} {0:>6.3f}")
    settings = [(1.5, 0.01, True), (0.5, 8.0, False)]
    if args.grid:
        settings += [(c, b, True) for c in (0.5, 1.0, 1.5, 2.5) for b in (0.0, 0.003, 0.01, 0.03)]
        settings += [(c, b, False) for c in (0.3, 0.5, 1.0, 1.5) for b in (1.0, 2.0, 4.0, 8.0, 16.0)]
    for min_cutoff, beta, per_pixel in settings:
        r = evaluate(min_cutoff, beta, per_pixel)
        label = f"One Euro {min_cutoff:g} Hz, beta {beta:g}/{'px' if per_pixel else 'body'}"
        if (min_cutoff, beta, per_pixel) == (0.5, 8.0, False):
            label += " (default)"
        elif (min_cutoff, beta, per_pixel) == (1.5, 0.01, True):
            label += " (before)"
        print(f"{label:<40} {r['still']:>7.4f} {r['action']:>7.4f} {r['lag']:>4.0f} {r['lag_max']:>4.0f} {r['dev']:>6.3f}")
    if args.per_clip:
        print(f"\n{'clip':<30} {'torso px':>8} {'lag before':>10} {'lag now':>8}")
        for row, raw in zip(labels, action):
            before, _ = lag_and_deviation(raw, smooth(raw, 1.5, 0.01, per_pixel=True))
            now, _ = lag_and_deviation(raw, smooth(raw, 0.5, 8.0))
            print(f"{row['file']:<30} {np.nanmedian(torso(raw)):>8.0f} {before:>10.0f} {now:>8.0f}")


if __name__ == "__main__":
    main()
