#!/usr/bin/env python3
"""Dev clips through `posewatch replay`: span-majority labels and the time to the first correct label.

    python training/dev_replay.py --posewatch .build/release/posewatch [--cache DIR] -- --config dev.toml
    (dev.toml: printf '[models]\\npose = "%s"\\n' MOVENET.tflite > dev.toml)

For each row of ../shared/data/videos/labels.csv the clip is converted and replayed as
Tests/Scoring/score_replay.py does (same conversion, same span-majority rule), and the **time to the
first correct label** is measured: seconds from the span's start (`active_from_s`, where the first
repetition begins; 0 for whole-clip rows) to the first decision inside the span whose label is the
truth, i.e. when the LED would first show the right action. A span never labelled right counts as
its whole length (and is listed). Nothing here trains; the clips are only measured.
"""
import argparse, csv, json, os, statistics, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "Scoring"))
import score_replay as SR  # noqa: E402

# ../shared/data beside the package root (never committed, only measured).
VIDEOS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data", "videos")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--posewatch", default=os.path.join(HERE, "..", ".build", "release", "posewatch"))
    ap.add_argument("--labels", default=os.path.join(VIDEOS, "labels.csv"))
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "posewatch-score-cache"))
    ap.add_argument("--decisions-out", help="write every clip's decisions to this JSON file")
    ap.add_argument("replay_args", nargs="*", help="extra arguments for posewatch replay (after --)")
    a = ap.parse_args()
    if not os.path.exists(a.labels):
        print(f"{a.labels}: not found (the dev clips are not part of the repository)", file=sys.stderr)
        return 2
    os.makedirs(a.cache, exist_ok=True)
    folder = os.path.dirname(os.path.abspath(a.labels))
    rows = list(csv.DictReader(open(a.labels, newline="")))
    ok, firsts, never, dump = 0, [], [], {}
    print(f"{'clip':40} {'truth':14} {'majority':14} {'first':>6}  decisions in the span")
    for r in rows:
        clip = SR.convert_clip(os.path.join(folder, r["file"]), 15, a.cache, 640)
        decisions, _, _ = SR.run_replay(a.posewatch, clip, a.replay_args)
        dump[r["file"]] = [(d["t"], d["label"]) for d in decisions]
        start = float(r["active_from_s"]) if r["active_from_s"] else 0.0
        end = float(r["active_to_s"]) if r["active_to_s"] else max([d["t"] for d in decisions] + [0.0])
        inside = [d for d in decisions if start <= d["t"] <= end]
        pred = SR.majority([d["label"] for d in inside])
        ok += pred == r["label"]
        hit = next((d["t"] for d in inside if d["label"] == r["label"]), None)
        first = (hit - start) if hit is not None else (end - start)
        if hit is None:
            never.append(r["file"])
        firsts.append(first)
        seq = "".join(SHORT.get(d["label"], "?") for d in inside)
        print(f"{r['file']:40} {r['label']:14} {pred:14} {first:6.2f}  {seq}")
    print(f"\nspan-majority labels: {ok}/{len(rows)}")
    print(f"time to the first correct label from the span's start: median {statistics.median(firsts):.2f} s, "
          f"mean {statistics.mean(firsts):.2f} s, max {max(firsts):.2f} s over {len(firsts)} spans"
          + (f"; never right (counted as the span's length): {', '.join(never)}" if never else ""))
    if a.decisions_out:
        json.dump(dump, open(a.decisions_out, "w"))
    return 0


SHORT = {"jumping_jacks": "J", "lunges": "L", "burpees": "B", "squats": "S", "push_ups": "P", "other": "o",
         "low_confidence": "c", "no_person": "_", "starting_up": "."}

if __name__ == "__main__":
    sys.exit(main())
