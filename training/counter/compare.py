"""Measures candidate counters on Countix-Fitness (MAE, OBO): the research behind issue 9's choice.

    /work/venv-counter/bin/python training/counter/compare.py [--only SUBSTRING]

Every candidate sees the same 148 usable sequences, mapped MediaPipe-33 → COCO-17 and taken at
15 fps, with the label fixed (as `replay --action`). "ours" = the squat/lunge/push_up subset.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import counter
import data
import methods


def chosen(**overrides):
    return lambda s: counter.count_sequence(s.poses, s.label, config=counter.Config(**overrides)).session


CANDIDATES = {
    # offline references (see the whole sequence)
    "offline: PC1 autocorrelation period × duration": lambda s: methods.offline_spectral(s.poses),
    "offline: PC1 peak count (prominence 0.35)": lambda s: methods.offline_peaks(s.poses),
    # online, per-action cue (only where the class is one of ours)
    "online: joint angle + hysteresis (knee/elbow)": lambda s: methods.run_online(
        s.poses, signal="angle", action=s.action, min_range=25 / 180, count_at="half").count,
    # online, class-agnostic, other signals
    "online: PC1 of raw box-normalised joints + hysteresis": lambda s: methods.run_online(
        s.poses, mode="iso", count_at="half", smooth=2, min_range=0.1).count,
    "online: PC1 band-passed at its autocorr period": lambda s: methods.run_band(s.poses).count,
    # the chosen counter and the leg cue's variants
    "CHOSEN: mirror-invariant PC1, window thresholds h=0.35, warm-up credited, leg cue 0.08 (squats/lunges)": chosen(),
    "  leg cue 0.05": chosen(leg_cue=0.05),
    "  leg cue 0.12": chosen(leg_cue=0.12),
    "  leg cue, no deferral (judged at the crossing only)": chosen(leg_defer=False),
    "  leg cue, deferral 0.5 s": chosen(leg_defer_s=0.5),
    "  leg cue, rest value = the last rest frame (no median)": chosen(leg_cue_rest="frame"),
    "  leg cue, none while an ankle is not below its knee": chosen(leg_valid_only=True),
    "  leg cue as the counting signal, minimum range 0.3 shin lengths (no PC1)": chosen(leg_cue=0, leg_signal=0.3),
    "  leg cue as the counting signal, minimum range 0.8 shin lengths (no PC1)": chosen(leg_cue=0, leg_signal=0.8),
    # the previous choice (no leg cue) and its neighbours
    "BEFORE: the same without the leg cue (round 2 choice)": chosen(leg_cue=0),
    "  without crediting the warm-up": chosen(leg_cue=0, replay_warmup=False),
    "  h=0.30": chosen(leg_cue=0, hysteresis=0.30),
    "  h=0.40": chosen(leg_cue=0, hysteresis=0.40),
    "  window 8 s": chosen(leg_cue=0, window_s=8.0),
    "  envelope over last 3.5 s": chosen(leg_cue=0, envelope_s=3.5),
    "  zigzag rule h=0.6 (relative to last extreme)": chosen(leg_cue=0, rule="zigzag", hysteresis=0.6),
    "  window OR zigzag 0.6": chosen(leg_cue=0, rule="both", zigzag=0.6),
    "  periodicity gate 0.3": chosen(leg_cue=0, gate=0.3),
    "  range = min(max − min, 2√2·std) (rejected, see below)": chosen(leg_cue=0, std_range=2.0 * 2.0 ** 0.5),
    "  smoothing 3 frames": chosen(leg_cue=0, smoothing=3),
    "  minimum range 0.05": chosen(leg_cue=0, min_range=0.05),
    "  range from p2/p98": chosen(leg_cue=0, envelope_pct=2),
    "  repeat check (far pose within 1.0·range of a recent one)": chosen(leg_cue=0, similar=1.0),
    "  max excursion 1.5 s": chosen(leg_cue=0, max_excursion_s=1.5),
    "  adaptive minimum period (reject < 0.5 × median of last 3 intervals)": chosen(leg_cue=0, interval_ratio=0.5),
    "  age-weighted range (weights exp(−age/6 s))": chosen(leg_cue=0, decay_s=6.0),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    seqs = data.load_countix()
    ours = [s for s in seqs if s.action]
    print(f"countix usable sequences: {len(seqs)} ({len(ours)} squat/lunge/push_up)", file=sys.stderr)
    print(f"| candidate | MAE all | OBO all | MAE ours | OBO ours |\n|---|---|---|---|---|")
    for name, fn in CANDIDATES.items():
        if args.only and args.only not in name:
            continue
        t0 = time.time()
        sub = ours if "angle" in name else seqs
        preds = np.array([fn(s) for s in sub])
        gts = np.array([s.count for s in sub])
        mask = np.array([bool(s.action) for s in sub])
        mae, obo = data.mae_obo(preds, gts)
        mae_o, obo_o = data.mae_obo(preds[mask], gts[mask])
        scope = " (ours only)" if "angle" in name else ""
        print(f"| {name}{scope} | {mae:.3f} | {obo:.3f} | {mae_o:.3f} | {obo_o:.3f} |", flush=True)
        print(f"  {name}: {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
