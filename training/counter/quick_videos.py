"""Counts on the cached MoveNet keypoints of the dev videos for a counter config (quick variant runs)."""
import csv, os, sys, counter, data, numpy as np
kw = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
videos = os.path.join(data.SHARED_DATA, "videos")
rows = [r for r in csv.DictReader(open(os.path.join(videos, "labels.csv"))) if r["reps"] and r["label"] != "other"]
ok = 0; out = []; preds = []; gts = []
for r in rows:
    poses = np.load("/tmp/posewatch-movenet/" + os.path.splitext(os.path.basename(r["file"]))[0] + ".npy")
    p = counter.count_sequence(poses, action=r["label"], config=counter.Config(**kw)).session
    gt, tol = int(r["reps"]), int(r["reps_tolerance"] or 0)
    ok += abs(p - gt) <= tol; preds.append(p); gts.append(gt)
    out.append(f"{os.path.basename(r['file'])[:14]}:{p}/{gt}")
print(kw, f"videos within tol {ok}/{len(rows)}", "MAE %.3f OBO %.3f" % data.mae_obo(preds, gts), " ".join(out))
