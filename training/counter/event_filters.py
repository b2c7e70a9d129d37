"""Ninth round (issue 9): how much could a rule that looks at the *timing* of the chosen counter's
repetitions remove from Countix's error? Offline screens on the event times of `counter.py` (label
fixed, as `replay --action`); counting does not feed back into the side logic, so dropping events
afterwards is what such a rule would do. Some of these look into the future (an upper bound).

    /work/venv-counter/bin/python training/counter/event_filters.py [--phase 1]

  isolated W either   keep an event only if another one lies within W s before or after it (not causal)
  isolated W before   keep an event only if another one lies within W s before it
  quiet G, confirm C  after G s without an event (between sets), an event counts only if the next one
                      follows within C s (the first event of the sequence always counts). With C up to
                      about 2 s this is causal within the issue's 1 s event bound for repetitions of up
                      to 2 s; larger C would break it and is listed to show the trend.

Each line: MAE / OBO over all 148 sequences, the odd / even halves, dense (duration / count ≤ 6 s)
and sparse. Reads ../shared/data only.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import counter  # noqa: E402
import data  # noqa: E402


def isolated(times: np.ndarray, window_s: float, before_only: bool) -> int:
    kept = 0
    for i, t in enumerate(times):
        others = np.delete(times, i)
        gaps = t - others if before_only else np.abs(others - t)
        if before_only:
            gaps = gaps[gaps > 0]  # an event credited on the same frame is not "before"
        kept += bool(np.any(gaps <= window_s))
    return kept


def quiet_confirm(times: np.ndarray, quiet_s: float, confirm_s: float) -> int:
    kept = 0
    for i, t in enumerate(times):
        if i == 0 or t - times[i - 1] <= quiet_s:
            kept += 1
        elif i + 1 < len(times) and times[i + 1] - t <= confirm_s:
            kept += 1
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phase", type=int, default=0)
    args = ap.parse_args()
    seqs = data.load_countix(phase=args.phase)
    events = [np.array([e[0] for e in counter.count_sequence(s.poses, s.label).events]) for s in seqs]
    gts = np.array([s.count for s in seqs])
    sparse = np.array([s.is_sparse for s in seqs])
    odd = np.arange(len(seqs)) % 2 == 1

    def line(name, preds):
        preds = np.array(preds)
        mae = {group: data.mae_obo(preds[rows], gts[rows])[0]
               for group, rows in (("odd", odd), ("even", ~odd), ("dense", ~sparse), ("sparse", sparse))}
        print(f"{name:28s} all {'%.3f / %.3f' % data.mae_obo(preds, gts)}  "
              + "  ".join(f"{group} {value:.3f}" for group, value in mae.items()))

    line("chosen (no filter)", [len(t) for t in events])
    for window in (4.5, 6.0, 8.0):
        for before in (False, True):
            line(f"isolated {window} {'before' if before else 'either'}", [isolated(t, window, before) for t in events])
    for quiet in (6.0, 8.0, 10.0, 15.0):
        for confirm in (1.5, 2.0, 3.0):
            line(f"quiet {quiet}, confirm {confirm}", [quiet_confirm(t, quiet, confirm) for t in events])


if __name__ == "__main__":
    main()
