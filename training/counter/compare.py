"""Measures candidate counters on Countix-Fitness (MAE, OBO): the research behind issue 9's choice.

    /work/venv-counter/bin/python training/counter/compare.py [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import data
import methods


def score(seqs, fn):
    preds = [fn(s) for s in seqs]
    gts = [s.count for s in seqs]
    return preds, data.mae_obo(preds, gts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    t0 = time.time()
    seqs = data.load_countix()
    ours = [s for s in seqs if s.action]
    print(f"countix usable sequences: {len(seqs)} ({len(ours)} squats/lunges/push_ups), loaded in {time.time() - t0:.1f} s",
          file=sys.stderr)

    candidates = {
        "offline spectral (PC1 autocorr × duration)": lambda s: methods.offline_spectral(s.poses),
        "offline peaks (PC1, prominence 0.35)": lambda s: methods.offline_peaks(s.poses),
        "online PCA + hysteresis θ=0.3 iso": lambda s: methods.run_online(s.poses).count,
        "online PCA + hysteresis θ=0.3 axis": lambda s: methods.run_online(s.poses, mode="axis").count,
        "online PCA + hysteresis θ=0.25": lambda s: methods.run_online(s.poses, theta=0.25).count,
        "online PCA + hysteresis θ=0.35": lambda s: methods.run_online(s.poses, theta=0.35).count,
        "online PCA + hysteresis window 4 s": lambda s: methods.run_online(s.poses, window_s=4.0).count,
        "online PCA + hysteresis window 9 s": lambda s: methods.run_online(s.poses, window_s=9.0).count,
        "online PCA + hysteresis p5/p95": lambda s: methods.run_online(s.poses, envelope="pct").count,
        "online PCA + hysteresis no smoothing": lambda s: methods.run_online(s.poses, smooth=1).count,
        "online PCA + hysteresis min range 0.1": lambda s: methods.run_online(s.poses, min_range=0.1).count,
        "online PCA + hysteresis min range 0.02": lambda s: methods.run_online(s.poses, min_range=0.02).count,
    }
    per_action = {
        "online angle + hysteresis (ours only)": lambda s: methods.run_online(
            s.poses, signal="angle", action=s.action, min_range=25 / 180).count,
    }
    rows = []
    for name, fn in list(candidates.items()) + list(per_action.items()):
        if args.only and args.only not in name:
            continue
        t1 = time.time()
        sub = ours if name in per_action else seqs
        preds, (mae, obo) = score(sub, fn)
        ours_idx = [i for i, s in enumerate(sub) if s.action]
        mae_o, obo_o = data.mae_obo([preds[i] for i in ours_idx], [sub[i].count for i in ours_idx])
        rows.append((name, mae, obo, mae_o, obo_o))
        print(f"{name:50s} all MAE {mae:.3f} OBO {obo:.3f} | ours MAE {mae_o:.3f} OBO {obo_o:.3f}  ({time.time() - t1:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
