"""Repetition-count evaluation for issue 9: MAE (mean |pred − gt| / gt) and OBO (share |pred − gt| ≤ 1).

    # Countix-Fitness and Penn Action through the Python reference counter (counter.py):
    /work/venv-counter/bin/python training/counter/evaluate.py countix [--rows] [--config "interval_ratio=0.5"] [--phase 1] [--restore-aspect]
    /work/venv-counter/bin/python training/counter/evaluate.py penn

    # The same through the Swift counter: the evaluation tests write per-sequence counts,
    #   POSEWATCH_COUNTS_DIR=/tmp/counts swift test --filter RepetitionCounterEvaluationTests
    # and this scores them (and compares them with the Python reference, sequence by sequence):
    /work/venv-counter/bin/python training/counter/evaluate.py swift /tmp/counts

    # Countix through `posewatch replay` (keypoint files): with --action, the counts must equal the
    # Python reference's; with the classifier's labels, the Python reference fed the same label
    # timeline (from the JSONL decisions) must give the same per-label counts (this checks the
    # holding of repetitions seen while no action is decided). Countix's poses are min–max
    # normalised per frame, so the classifier's labels themselves mean little there.
    /work/venv-counter/bin/python training/counter/evaluate.py replay --posewatch .build/release/posewatch

    # Real videos through the whole pipeline, once `posewatch replay` exists (issue 7): the command
    # template gets {input} (the clip, or a converted file from --convert) and {label}; the last
    # JSONL line's summary.reps[label] is the prediction; tolerance from labels.csv.
    /work/venv-counter/bin/python training/counter/evaluate.py videos \
        --command ".build/release/posewatch replay {input} --action {label} --format jsonl" \
        [--convert "ffmpeg -loglevel error -y -i {clip} -vf fps=15 -pix_fmt yuv420p {output}"]

Nothing here reads outside ../shared/data or writes into the repository.
"""
from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

import data


def report(name, preds, gts):
    mae, obo = data.mae_obo(preds, gts)
    print(f"{name}: {len(gts)} sequences  MAE {mae:.3f}  OBO {obo:.3f}")
    return mae, obo


def countix_rows(predict):
    seqs = data.load_countix()
    rows = [(s.name, s.dataset_label, s.count, predict(s)) for s in seqs]
    return rows


def config_from(text):
    """`--config "interval_ratio=0.5, hysteresis=0.3"` → counter.Config overrides (a variant run)."""
    import counter
    return counter.Config(**eval(f"dict({text})", {})) if text else counter.Config()


def score_countix(rows, show_rows=False, durations=None):
    report("countix_fitness (all usable)", [r[3] for r in rows], [r[2] for r in rows])
    # Split-half: sequences in index order, odd and even positions (a variant tuned on one half
    # is reported on the other).
    for parity, name in ((1, "odd"), (0, "even")):
        half = [r for i, r in enumerate(rows) if i % 2 == parity]
        report(f"  {name}-indexed half", [r[3] for r in half], [r[2] for r in half])
    if durations is not None:
        dense = [r for r in rows if durations[r[0]] / r[2] <= data.SPARSE_PERIOD_S]
        sparse = [r for r in rows if durations[r[0]] / r[2] > data.SPARSE_PERIOD_S]
        report(f"  duration/count <= {data.SPARSE_PERIOD_S:.0f} s (the set fills the video)",
               [r[3] for r in dense], [r[2] for r in dense])
        report(f"  duration/count >  {data.SPARSE_PERIOD_S:.0f} s (mostly other movement)",
               [r[3] for r in sparse], [r[2] for r in sparse])
    ours = [r for r in rows if r[1] in data.COUNTIX_ACTION]
    report("countix_fitness squat/lunge/push_up", [r[3] for r in ours], [r[2] for r in ours])
    by = collections.defaultdict(list)
    for r in rows:
        by[r[1]].append(r)
    for label in sorted(by):
        rs = by[label]
        mae, obo = data.mae_obo([r[3] for r in rs], [r[2] for r in rs])
        signed = np.mean([(r[3] - r[2]) / r[2] for r in rs])
        print(f"  {label:14s} n={len(rs):3d}  MAE {mae:.3f}  OBO {obo:.3f}  mean signed error {signed:+.3f}")
    if show_rows:
        for r in rows:
            print(f"  {r[0]:28s} {r[1]:14s} gt {r[2]:3d} pred {r[3]:3d}")


def penn_summary(rows):
    """Penn Action has no repetition labels: its clips are mostly one cycle, some two or three. We
    report what the counter says per class (share of clips with 0, 1, 2, ≥3 counted), a sanity
    check rather than an accuracy."""
    by = collections.defaultdict(list)
    for name, label, count in rows:
        by[label].append(count)
    print("penn_action_coco17 (no count labels; clips mostly one cycle): counted per clip")
    print(f"  {'class':14s} {'clips':>5s} {'mean':>5s}  share 0 / 1 / 2 / ≥3")
    for label in sorted(by):
        c = np.array(by[label])
        shares = [np.mean(c == 0), np.mean(c == 1), np.mean(c == 2), np.mean(c >= 3)]
        print(f"  {label:14s} {len(c):5d} {c.mean():5.2f}  " + " / ".join(f"{x:.2f}" for x in shares))


def cmd_countix(args):
    import counter
    config = config_from(args.config)
    convert = data.countix_to_coco
    if args.restore_aspect:
        # ninth round: each frame's lost aspect estimated from bone proportions (the sixth round's
        # restoration) instead of the poses as the file has them
        import countix_veto
        convert = countix_veto.recover_pixels
    seqs = data.load_countix(phase=args.phase, convert=convert)
    rows = [(s.name, s.dataset_label, s.count, counter.count_sequence(s.poses, s.label, config=config).session) for s in seqs]
    score_countix(rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})


def cmd_penn(args):
    import counter
    config = config_from(args.config)
    rows = []
    for s in data.load_penn():
        action = data.PENN_ACTION.get(s.dataset_label, data.GENERIC_LABEL)
        rows.append((s.name, s.dataset_label, counter.count_sequence(s.poses, action=action, config=config).session))
    penn_summary(rows)


def cmd_swift(args):
    import counter
    path = os.path.join(args.directory, "countix.tsv")
    if os.path.exists(path):
        with open(path) as f:
            swift = {r["name"]: int(r["predicted"]) for r in csv.DictReader(f, delimiter="\t")}
        seqs = data.load_countix()
        rows = [(s.name, s.dataset_label, s.count, swift[s.name]) for s in seqs]
        print("Swift RepetitionCounter:")
        score_countix(rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})
        python = {s.name: counter.count_sequence(s.poses, s.label).session for s in seqs}
        same = sum(python[n] == swift[n] for n in swift)
        print(f"Swift vs Python reference: identical counts on {same}/{len(swift)} sequences")
    path = os.path.join(args.directory, "penn.tsv")
    if os.path.exists(path):
        with open(path) as f:
            penn_summary([(r["name"], r["label"], int(r["predicted"])) for r in csv.DictReader(f, delimiter="\t")])


def replay_jsonl(posewatch, path, extra):
    result = subprocess.run([posewatch, "replay", path, "--fps", "15", "--format", "jsonl", "--config", "/dev/null"] + extra,
                            capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def cmd_replay(args):
    import counter
    seqs = data.load_countix()
    fixed_rows, same_fixed, same_classified, held = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for s in seqs:
            # Replay wants pixels: the normalised body box is placed in a 480 × 480 frame (the
            # counter's features are box-relative, so the scale does not matter).
            poses = s.poses.copy()
            poses[:, :, :2] = 80 + poses[:, :, :2] * 320
            poses[:, :, 2] = np.where(s.poses[:, :, 2] > 0, 0.9, 0)
            poses[s.poses[:, :, 2].max(axis=1) == 0] = 0
            path = os.path.join(tmp, s.name)
            np.save(path, poses.astype(np.float32))
            action = s.label
            fixed = int(replay_jsonl(args.posewatch, path, ["--action", action])[-1]["summary"]["reps"][action])
            fixed_rows.append((s.name, s.dataset_label, s.count, fixed))
            same_fixed += fixed == counter.count_sequence(s.poses, action=action).session
            lines = replay_jsonl(args.posewatch, path, [])
            decisions = [(r["t"], r["label"]) for r in lines if "label" in r and "event" not in r]
            reference = counter.RepetitionCounter(counter.Config())
            without_hold = counter.RepetitionCounter(counter.Config(hold_s=0))
            k = -1
            for i, pose in enumerate(s.poses):
                t = i / s.fps
                while k + 1 < len(decisions) and decisions[k + 1][0] <= t + 2e-3:  # JSONL times have 3 decimals
                    k += 1
                label = decisions[k][1] if k >= 0 else "starting_up"
                label = label if label in counter.COUNTABLE or label == "other" else None
                for c in (reference, without_hold):
                    c.process(t, pose if pose[:, 2].max() > 0 else None, label)
            swift = lines[-1]["summary"]["reps"]
            same_classified += all(reference.counts[a] == int(swift.get(a, 0)) for a in counter.COUNTABLE)
            held += reference.session != without_hold.session
    print("Swift RepetitionCounter through posewatch replay --action:")
    score_countix(fixed_rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})
    print(f"replay --action vs Python reference: identical counts on {same_fixed}/{len(seqs)} sequences")
    print(f"replay with the classifier's labels vs Python reference on the same labels: identical per-label counts on "
          f"{same_classified}/{len(seqs)} sequences (held repetitions changed the count on {held})")


def cmd_videos(args):
    """Two figures per clip. "clip": the final count over the whole clip (the summary). "span": the
    repetition events of the clip's label whose time lies inside the labelled active span
    (labels.csv `active_from_s`–`active_to_s`), which is where the labelled repetitions are:
    outside it are title cards, standing and talking, whose right label is `other` or
    `no_person` (data README), so with `--action` fixing the label for the whole clip anything
    counted there is not one of the labelled repetitions. An event comes at most 1 s after its
    repetition ended and usually before (at the turning half), so a repetition inside the span
    has its event inside it; not one second of slack is given beyond the span."""
    videos = os.path.join(data.SHARED_DATA, "videos")
    with open(os.path.join(videos, "labels.csv")) as f:
        clips = [r for r in csv.DictReader(f) if r["reps"]]
    preds, span_preds, gts, within, span_within = [], [], [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for clip in clips:
            source = os.path.join(videos, clip["file"])
            inp = source
            if args.convert:
                inp = os.path.join(tmp, os.path.splitext(os.path.basename(clip["file"]))[0] + args.converted_ext)
                convert = args.convert.replace("{clip}", shlex.quote(source)).replace("{output}", shlex.quote(inp))
                subprocess.run(convert, shell=True, check=True)
            cmd = args.command.replace("{input}", shlex.quote(inp)).replace("{label}", clip["label"])
            result = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if result.returncode != 0:
                print(f"  {clip['file']}: replay failed ({result.returncode}): {result.stderr.strip()[:200]}")
                continue
            lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
            summary = lines[-1]["summary"]
            pred = int(summary.get("reps", {}).get(clip["label"], 0))
            start = float(clip["active_from_s"]) if clip["active_from_s"] else -np.inf
            end = float(clip["active_to_s"]) if clip["active_to_s"] else np.inf
            # An event can stand for more than one repetition (the warm-up credit, held ones):
            # its count goes up by more than one.
            span_pred, last = 0, 0
            for r in lines:
                if r.get("event") == "rep" and r.get("label") == clip["label"]:
                    if start <= r["t"] <= end:
                        span_pred += int(r["count"]) - last
                    last = int(r["count"])
            gt = int(clip["reps"])
            tol = int(clip["reps_tolerance"] or 0)
            if clip["label"] == "other":
                # A repetitive move that is none of ours: its reference count is what a generic counter
                # would say, but ours never counts `other`, so 0 is right. Not in MAE/OBO.
                ok = span_ok = pred == 0
            else:
                ok = abs(pred - gt) <= tol
                span_ok = abs(span_pred - gt) <= tol
                within += ok
                span_within += span_ok
                preds.append(pred)
                span_preds.append(span_pred)
                gts.append(gt)
            print(f"  {clip['file']:34s} {clip['label']:14s} gt {gt:3d} ±{tol}  clip {pred:3d} {'ok  ' if ok else 'MISS'}"
                  f"  span {start:5.1f}-{end:5.1f} s {span_pred:3d} {'ok' if span_ok else 'MISS'}")
    if gts:
        report("videos with counts, whole clip", preds, gts)
        print(f"  within tolerance: {within}/{len(gts)} = {within / len(gts):.2f}")
        report("videos with counts, events inside the labelled span", span_preds, gts)
        print(f"  within tolerance: {span_within}/{len(gts)} = {span_within / len(gts):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("countix")
    p.add_argument("--rows", action="store_true")
    p.add_argument("--config", default="", help='counter.Config overrides, e.g. "interval_ratio=0.5"')
    p.add_argument("--phase", type=int, default=0,
                   help="source frames to shift the 30 → 15 fps subsampling by (1: the odd frames)")
    p.add_argument("--restore-aspect", action="store_true",
                   help="estimate each frame's lost aspect from bone proportions first (a variant, ninth round)")
    p.set_defaults(fn=cmd_countix)
    p = sub.add_parser("penn")
    p.add_argument("--config", default="", help='counter.Config overrides')
    p.set_defaults(fn=cmd_penn)
    p = sub.add_parser("swift")
    p.add_argument("directory")
    p.add_argument("--rows", action="store_true")
    p.set_defaults(fn=cmd_swift)
    p = sub.add_parser("replay")
    p.add_argument("--posewatch", default=".build/release/posewatch")
    p.add_argument("--rows", action="store_true")
    p.set_defaults(fn=cmd_replay)
    p = sub.add_parser("videos")
    p.add_argument("--command", required=True)
    p.add_argument("--convert", default="", help="command template with {clip} and {output}")
    p.add_argument("--converted-ext", default=".y4m")
    p.set_defaults(fn=cmd_videos)
    args = ap.parse_args()
    if not os.path.isdir(data.SHARED_DATA):
        print(f"{data.SHARED_DATA} is absent: nothing to evaluate", file=sys.stderr)
        sys.exit(0)
    args.fn(args)


if __name__ == "__main__":
    main()
