#!/usr/bin/env python3
"""Score `posewatch replay` on labelled clips or keypoint files.

Two modes, both driving the real `posewatch replay` binary and reading its JSONL (schema in README.md):

  videos     a folder of clips described by a labels CSV in the format of
             ../shared/data/videos/labels.csv (file, label, active_from_s, active_to_s, reps,
             reps_tolerance, ...). Each clip is converted once with ffmpeg to Y4M at the model frame
             rate (cached), replayed, and scored:
               - span-majority label: the most frequent decision label among decisions whose time lies
                 inside the labelled active span (or the whole clip when the span is empty);
               - repetitions: the replay's final count for the clip's label (ground truth label),
                 compared with the labelled count: MAE = mean |pred - gt| / gt, OBO = share with
                 |pred - gt| <= 1, and "within tolerance" with the CSV's tolerance; over the whole
                 clip (what an owner sees) and inside the labelled span (events whose `at`, when the
                 repetition happened, lies within it, 1 s of slack either side). On a clip labelled
                 `other`: every repetition counted on it, under any label (nothing should be).
  keypoints  Penn Action COCO-17 keypoints (index.csv + <action>/<id>.npy, (x, y, visible) in pixels).
             Each file is written as replay input (x, y, score) with score = 0.9 for visible joints and
             0 for occluded or missing ones (as training/evaluate.py does), replayed at --fps with the
             clip's frame size, and scored per decision (window accuracy) and per clip (majority).

Prints per-clip rows, per-class confusion, and the summary figures. Needs Python 3, ffmpeg (videos)
and numpy (keypoints). Example:

  Tests/Scoring/score_replay.py videos --labels ../shared/data/videos/labels.csv \
      --posewatch .build/release/posewatch
  Tests/Scoring/score_replay.py keypoints --root ../shared/data/keypoints/penn_action_coco17 \
      --posewatch .build/release/posewatch
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile

LABELS = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups", "other"]
OUTCOMES = ["no_person", "low_confidence", "starting_up"]
PENN_TO_LABEL = {"jumping_jacks": "jumping_jacks", "squat": "squats", "pushup": "push_ups"}


def run_replay(posewatch, path, extra):
    """Runs replay and returns (decisions, rep events, summary)."""
    command = [posewatch, "replay", path, "--format", "jsonl"] + extra
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    decisions, reps, summary = [], [], None
    for line in result.stdout.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if "summary" in record:
            summary = record["summary"]
        elif record.get("event") == "rep":
            reps.append(record)
        elif "label" in record:
            decisions.append(record)
    if summary is None:
        raise RuntimeError(f"{path}: replay printed no summary line")
    return decisions, reps, summary


def majority(labels):
    counts = collections.Counter(label for label in labels if label != "starting_up")
    if not counts:
        return "starting_up"
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]


def print_confusion(pairs, title):
    columns = LABELS + [o for o in OUTCOMES if any(p == o for _, p in pairs)]
    rows = [label for label in LABELS if any(t == label for t, _ in pairs)]
    print(f"\n{title} (rows: truth, columns: prediction)")
    width = max(len(c) for c in columns + rows) + 1
    print(" " * width + "".join(c[:width].rjust(width) for c in columns))
    for truth in rows:
        counts = collections.Counter(p for t, p in pairs if t == truth)
        print(truth.ljust(width) + "".join(str(counts.get(c, 0)).rjust(width) for c in columns))


def convert_clip(source, fps, cache, max_width):
    target = os.path.join(cache, os.path.basename(source).rsplit(".", 1)[0] + f"_{fps}fps_{max_width}w.y4m")
    if not os.path.exists(target):
        # yuv420p Y4M at the model rate and at most a webcam's width (posewatch asks a camera for the
        # smallest size at least the model input): what `posewatch replay` reads.
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", source, "-r", str(fps),
                        "-vf", f"scale='min({max_width},iw)':-2", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", target],
                       check=True)
    return target


def score_videos(args):
    folder = args.folder or os.path.dirname(os.path.abspath(args.labels))
    cache = args.cache or os.path.join(tempfile.gettempdir(), "posewatch-score-cache")
    os.makedirs(cache, exist_ok=True)
    pairs, count_rows, failures = [], [], 0
    other_rows = []  # (file, repetitions counted) of the clips labelled other
    span_rows = []
    print(f"{'clip':40} {'truth':14} {'majority':14} {'reps':>5} {'span':>5} {'gt':>4} {'tol':>4}")
    with open(args.labels, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        source = os.path.join(folder, row["file"])
        if not os.path.exists(source):
            print(f"{row['file']:40} missing, skipped")
            continue
        try:
            clip = convert_clip(source, args.fps, cache, args.max_width)
            decisions, events, summary = run_replay(args.posewatch, clip, args.replay_args)
        except (RuntimeError, subprocess.CalledProcessError) as error:
            print(f"{row['file']:40} FAILED: {error}")
            failures += 1
            continue
        start = float(row["active_from_s"]) if row.get("active_from_s") else float("-inf")
        end = float(row["active_to_s"]) if row.get("active_to_s") else float("inf")
        inside = [d["label"] for d in decisions if start <= d["t"] <= end]
        predicted = majority(inside)
        pairs.append((row["label"], predicted))
        reps_text, span_text, gt_text, tol_text = "", "", "", ""
        # Repetitions are scored for the five exercises; `other` is never counted (a hard negative
        # with a count in the CSV is right when posewatch counts nothing).
        if row.get("reps") and row["label"] != "other":
            gt, tolerance = int(row["reps"]), int(row.get("reps_tolerance") or 0)
            pred = int(summary.get("reps", {}).get(row["label"], 0))
            count_rows.append((row["file"], pred, gt, tolerance))
            in_span = sum(1 for e in events if e["label"] == row["label"] and start - 1 <= e.get("at", e["t"]) <= end + 1)
            span_rows.append((row["file"], in_span, gt, tolerance))
            reps_text, span_text, gt_text, tol_text = str(pred), str(in_span), str(gt), str(tolerance)
        elif row["label"] == "other":
            # Nothing should be counted on activities that are not one of the five (issue 46): the
            # clip's repetitions under any label.
            counted = sum(int(n) for n in summary.get("reps", {}).values())
            other_rows.append((row["file"], counted))
            reps_text = str(counted)
        print(f"{row['file']:40} {row['label']:14} {predicted:14} {reps_text:>5} {span_text:>5} {gt_text:>4} {tol_text:>4}")
    correct = sum(1 for truth, predicted in pairs if truth == predicted)
    print_confusion(pairs, "span-majority labels")
    print(f"\nspan-majority label accuracy: {correct}/{len(pairs)} = {correct / max(1, len(pairs)):.3f}")
    for name, table in (("whole clip", count_rows), ("in the labelled span", span_rows)):
        positive = [r for r in table if r[2] > 0]
        if not positive:
            continue
        mae = sum(abs(p - g) / g for _, p, g, _ in positive) / len(positive)
        obo = sum(1 for _, p, g, _ in positive if abs(p - g) <= 1) / len(positive)
        within = sum(1 for _, p, g, t in positive if abs(p - g) <= t)
        print(f"repetitions over {len(positive)} clips with counts, {name}: MAE {mae:.3f}  OBO {obo:.3f}  "
              f"within tolerance {within} of {len(positive)}")
    if other_rows:
        print(f"repetitions counted on {len(other_rows)} clips labelled other: {sum(n for _, n in other_rows)} "
              f"({', '.join(f'{os.path.basename(f)} {n}' for f, n in other_rows if n) or 'none'})")
    if failures:
        print(f"{failures} clip(s) failed to replay")
    return 1 if failures else 0


def score_keypoints(args):
    import numpy as np  # only this mode needs numpy

    index = os.path.join(args.root, "index.csv")
    with open(index, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if args.split in ("all", r["split"])]
    window_pairs, clip_pairs, failures = [], [], 0
    with tempfile.TemporaryDirectory() as scratch:
        for row in rows:
            truth = PENN_TO_LABEL.get(row["action"], "other")
            source = os.path.join(args.root, row["action"], row["id"] + ".npy")
            points = np.load(source).astype(np.float32)
            scores = np.where(points[:, :, 2] > 0, 0.9, 0.0).astype(np.float32)
            converted = np.concatenate([points[:, :, :2], scores[:, :, None]], axis=2)
            target = os.path.join(scratch, row["id"] + ".npy")
            np.save(target, converted)
            try:
                decisions, _, _ = run_replay(args.posewatch, target, ["--fps", str(args.fps), "--frame-size",
                                                                      f"{row['width']}x{row['height']}"] + args.replay_args)
            except RuntimeError as error:
                print(f"{row['id']} FAILED: {error}")
                failures += 1
                continue
            labels = [d["label"] for d in decisions if d["label"] != "starting_up"]
            window_pairs += [(truth, label) for label in labels]
            clip_pairs.append((truth, majority(labels)))
            if args.verbose:
                print(f"{row['id']} {row['action']:14} {truth:14} {majority(labels):14} windows={len(labels)}")
    print_confusion(window_pairs, "windows")
    print_confusion(clip_pairs, "clip majority")
    window_correct = sum(1 for t, p in window_pairs if t == p)
    clip_correct = sum(1 for t, p in clip_pairs if t == p)
    print(f"\nwindow accuracy: {window_correct}/{len(window_pairs)} = {window_correct / max(1, len(window_pairs)):.3f}")
    print(f"clip majority accuracy: {clip_correct}/{len(clip_pairs)} = {clip_correct / max(1, len(clip_pairs)):.3f}")
    too_short = sum(1 for _, p in clip_pairs if p == "starting_up")
    if too_short:
        print(f"{too_short} clip(s) shorter than one window gave no decision (counted as wrong)")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--posewatch", default=".build/release/posewatch", help="the posewatch binary")
    sub = parser.add_subparsers(dest="mode", required=True)
    videos = sub.add_parser("videos", help="labelled clips")
    videos.add_argument("--labels", required=True, help="labels CSV (format of ../shared/data/videos/labels.csv)")
    videos.add_argument("--folder", help="where the clips are (default: the CSV's folder)")
    videos.add_argument("--fps", type=int, default=15, help="conversion frame rate (the model's)")
    videos.add_argument("--cache", help="where converted Y4M files are kept")
    videos.add_argument("--max-width", type=int, default=640, help="downscale wider clips to this width (default 640)")
    keypoints = sub.add_parser("keypoints", help="Penn Action COCO-17 keypoint folder")
    keypoints.add_argument("--root", required=True, help="folder with index.csv and <action>/<id>.npy")
    keypoints.add_argument("--fps", type=int, default=30, help="the keypoints' frame rate")
    keypoints.add_argument("--split", default="all", choices=["all", "train", "test"])
    keypoints.add_argument("--verbose", action="store_true")
    for mode in (videos, keypoints):
        mode.add_argument("replay_args", nargs="*", help="extra arguments for posewatch replay (after --)")
    args = parser.parse_args()
    return score_videos(args) if args.mode == "videos" else score_keypoints(args)


if __name__ == "__main__":
    sys.exit(main())
