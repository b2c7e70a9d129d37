#!/usr/bin/env python3
"""Smart cropping vs letterboxing the whole frame: keypoint accuracy when the person is small.

Developers run this; CI does not. The dev videos have no ground-truth keypoints, so the reference is
MoveNet itself where it sees the person large: each frame at full size. The same frame is then
shrunk (scale 1/2 or 1/3, ffmpeg's bicubic scaler) and placed in a grey canvas of the original size,
left of centre and low (a person across the room, standing on the floor), and the estimator runs on
that canvas sequence twice:

* letterbox: every frame scaled whole into the 192x192 input;
* smart cropping: posewatch's CropPolicy, each frame cropped around the previous frame's person.

Both go through posewatch's preprocessing (posewatch_pose.py, bit-exact with the Swift estimator;
tests: RealFrameTests) and LiteRT's XNNPACK kernels (the reference kernels give the same poses within
int8 rounding and take 60x longer). Reference keypoints are mapped into canvas pixels; a keypoint is
judged where the reference scores at least 0.3, on frames where the reference sees a person.

* PCK@0.2: share of judged keypoints within 0.2 torso lengths of the reference (torso = distance
  from the shoulder midpoint to the hip midpoint of the reference, in canvas pixels);
* error: mean distance to the reference in torso lengths;
* found: frames where the presence rule saw a person, of those where the reference did;
* score: mean keypoint score over all 17 joints on those frames.

Two references are reported: the letterbox of the full-size frame, and smart cropping on the
full-size frame (so neither mode is favoured by sharing the reference's preprocessing); the rows at
scale 1.00 compare the two references with each other (how well MoveNet agrees with itself when only
the preprocessing changes, at full size).

Clips: the ten dev videos over their labelled action span (labels.csv), at most SECONDS seconds
each, at 15 fps (the rate posewatch runs at; cropping depends on frame-to-frame motion).

  /work/venv/bin/python Tests/PoseEstimationTests/Scripts/cropping_accuracy.py [--seconds 8]
"""
import argparse
import csv
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import posewatch_pose as pp  # noqa: E402

FPS = 15
REFERENCE_SCORE = 0.3
PLACE_X, PLACE_Y = 0.25, 0.75  # where the shrunken frame sits in the free space of the canvas


def canvas_filter(width, height, scale):
    """ffmpeg filter: shrink to an even size, pad to width x height with grey; returns the filter
    and the mapping (factor_x, factor_y, offset_x, offset_y) from frame pixels to canvas pixels."""
    sw = int(width * scale) // 2 * 2
    sh = int(height * scale) // 2 * 2
    px = int((width - sw) * PLACE_X) // 2 * 2
    py = int((height - sh) * PLACE_Y) // 2 * 2
    return (f"scale={sw}:{sh}:flags=bicubic,pad={width}:{height}:{px}:{py}:color=0x808080",
            (sw / width, sh / height, px, py))


def measure(poses, references):
    """PCK@0.2, mean error and mean score of poses ([frames] of (keypoints, person)) against references."""
    judged = within = 0
    error = 0.0
    found = frames = 0
    scores = []
    for (keypoints, person), reference in zip(poses, references):
        if reference is None:
            continue
        frames += 1
        found += person is not None
        scores.append(float(keypoints[:, 2].mean()))
        torso = pp.torso_size(reference)
        if torso <= 0:
            continue
        mask = reference[:, 2] >= REFERENCE_SCORE
        distance = np.hypot(*(keypoints[mask, :2] - reference[mask, :2]).T) / torso
        judged += int(mask.sum())
        within += int((distance < 0.2).sum())
        error += float(distance.sum())
    return {"frames": frames, "found": found / max(frames, 1), "pck": within / max(judged, 1),
            "error": error / max(judged, 1), "score": float(np.mean(scores)) if scores else 0.0, "judged": judged}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8.0, help="at most this much of each clip's action span")
    parser.add_argument("--scales", default="0.5,0.333", help="shrink factors of the frame inside the canvas")
    parser.add_argument("--per-clip", action="store_true")
    args = parser.parse_args()
    scales = [float(s) for s in args.scales.split(",")]
    runner = pp.interpreter(reference=False)
    labels = list(csv.DictReader(open(os.path.join(pp.VIDEOS, "labels.csv"))))
    totals = {}  # (reference, scale, mode) -> list of (poses, references) per clip
    for row in labels:
        if not row["active_from_s"] or not os.path.exists(os.path.join(pp.VIDEOS, row["file"])):
            continue  # clips with a class label only (no action span)
        clip = os.path.join(pp.VIDEOS, row["file"])
        start = float(row["active_from_s"])
        duration = min(float(row["active_to_s"]) - start, args.seconds)
        # References on the full-size frame.
        references = {}
        for mode in ("letterbox", "smart"):
            estimator = pp.Estimator(runner, smart_cropping=mode == "smart")
            refs = []
            for luma, cb, cr, full in pp.y4m_stream(clip, start=start, duration=duration, fps=FPS):
                _, _, _, keypoints, person = estimator.estimate(luma, cb, cr, full)
                refs.append((keypoints, person))
            references[mode] = refs
            height, width = luma.shape
        # How far the two references are from each other (full size: each mode against the other).
        for reference_mode, mode in (("letterbox", "smart"), ("smart", "letterbox")):
            totals.setdefault((reference_mode, 1.0, mode), []).append(
                (row["file"], references[mode], [person for _, person in references[reference_mode]]))
        for scale in scales:
            vf, (fx, fy, ox, oy) = canvas_filter(width, height, scale)
            mapped = {mode: [None if r is None else np.column_stack([r[:, 0] * fx + ox, r[:, 1] * fy + oy, r[:, 2]])
                             for _, r in refs] for mode, refs in references.items()}
            for mode in ("letterbox", "smart"):
                estimator = pp.Estimator(runner, smart_cropping=mode == "smart")
                poses = []
                for luma, cb, cr, full in pp.y4m_stream(clip, start=start, duration=duration, fps=FPS, vf_extra=vf):
                    _, _, _, keypoints, person = estimator.estimate(luma, cb, cr, full)
                    poses.append((keypoints, person))
                for reference_mode, refs in mapped.items():
                    n = min(len(poses), len(refs))
                    totals.setdefault((reference_mode, scale, mode), []).append((row["file"], poses[:n], refs[:n]))
        print(f"{row['file']}: {len(references['letterbox'])} frames", file=sys.stderr)

    print(f"\nKeypoint accuracy on a shrunken person (dev clips, labelled action spans, <= {args.seconds:g} s each, {FPS} fps)")
    print(f"{'reference (full-size frame)':<28} {'scale':>5} {'mode':<10} {'frames':>6} {'found':>6} {'PCK@0.2':>8} {'error':>6} {'score':>6}")
    for (reference_mode, scale, mode), clips in sorted(totals.items(), key=lambda kv: (kv[0][0], -kv[0][1], kv[0][2])):
        poses = [p for _, ps, _ in clips for p in ps]
        refs = [r for _, _, rs in clips for r in rs]
        m = measure(poses, refs)
        print(f"{reference_mode:<28} {scale:>5.2f} {mode:<10} {m['frames']:>6} {m['found']:>6.3f} {m['pck']:>8.3f} {m['error']:>6.3f} {m['score']:>6.3f}")
        if args.per_clip:
            for name, ps, rs in clips:
                c = measure(ps, rs)
                print(f"    {name:<32} {c['frames']:>6} {c['found']:>6.3f} {c['pck']:>8.3f} {c['error']:>6.3f} {c['score']:>6.3f}")


if __name__ == "__main__":
    main()
