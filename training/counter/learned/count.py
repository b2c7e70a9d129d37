"""The counter on the learned network's output (seventh round, issue 9): causal, per frame.

`out` is float[T, 3] per frame: (cos φ, sin φ, p(repeating)). While p(repeating) is on
(hysteresis p_on / p_off) and the phase vector is long enough to mean something (|(cos, sin)| ≥
min_mag: the net is unsure where in the cycle the person is when it is short), the phase is
unwrapped and accumulated; each time the accumulated phase passes the next far-pose mark (π, 3π,
…) one repetition is counted on that frame, half a repetition before it ends (as the rule-based
counter does). When p(repeating) turns on, the phase is also accumulated over the `credit_s`
before (the frames that made the net decide), so a set's first repetition is counted at most that
late instead of lost. A gap of more than `gap_s` with p off forgets the phase.
"""
from __future__ import annotations

import math

import numpy as np


def smooth(p, frames):
    """Causal moving average over the last `frames` frames (the net's p(repeating) flickers
    frame to frame on real poses; every flicker off and on again would restart the phase)."""
    if frames <= 1:
        return p
    c = np.cumsum(np.concatenate([[0.0], p]))
    i = np.arange(1, len(p) + 1)
    return (c[i] - c[np.maximum(i - frames, 0)]) / np.minimum(i, frames)


def while_repeating(p, p_on, p_off, credit, gap, step, restart):
    """Both counters' gate: calls step(t) on every frame while p(repeating) is on (hysteresis p_on /
    p_off). When it turns on after more than `gap` frames off (or for the first time), restart()
    forgets the counter's state and the `credit` frames before are stepped first: the frames that
    made the net decide, so their repetitions count now (at most credit frames late)."""
    active = False
    off_since = None
    for t in range(len(p)):
        if active:
            if p[t] < p_off:
                active = False
                off_since = t
        elif p[t] > p_on:
            active = True
            if off_since is None or t - off_since > gap:
                restart()
                for u in range(max(0, t - credit), t):
                    step(u)
            off_since = None
        if active:
            step(t)


def count(out, fps=15.0, p_on=0.6, p_off=0.4, min_mag=0.3, credit_s=1.0, gap_s=1.0, p_smooth=1, gate=None, at_phase=0.5, rel_start=False, min_first=0.0, start_mag=0.0):
    """-> list of event frame indices. `gate` (bool[T], optional) must also be true to count (a
    label gating counting live; None = always). at_phase (learned7): where in the cycle a
    repetition is counted, 0.5 = the far pose (round 7), 1.0 = back at rest (the rules count at
    the return today)."""
    c, s, p = out[:, 0], out[:, 1], smooth(out[:, 2], p_smooth)
    mag = np.hypot(c, s)
    phi = np.arctan2(s, c)
    events = []
    acc = None  # accumulated phase since the state was (re)started
    mark = None  # the next far-pose mark
    prev = None  # phase at the last frame that was used
    credit = int(round(credit_s * fps))
    gap = int(round(gap_s * fps))

    def step(t):
        nonlocal acc, mark, prev
        if mag[t] < min_mag:
            return
        if prev is None:
            if mag[t] < start_mag:  # learned9: the first phase taken must be a confident one
                return
            acc = phi[t]  # in (−π, π]: the far pose (π) is the first mark
            mark = 2 * math.pi * at_phase
            if rel_start:  # the first mark is the next at_phase crossing after where stepping starts
                acc = phi[t] % (2 * math.pi)
                while mark - 2 * math.pi > acc:
                    mark -= 2 * math.pi
                while mark - acc <= 2 * math.pi * min_first:
                    mark += 2 * math.pi
            prev = phi[t]
            return
        d = (phi[t] - prev + math.pi) % (2 * math.pi) - math.pi
        acc += d
        prev = phi[t]
        while acc >= mark:
            if gate is None or gate[t]:
                events.append(t)
            mark += 2 * math.pi

    def restart():
        nonlocal acc, mark, prev
        acc = mark = prev = None

    while_repeating(p, p_on, p_off, credit, gap, step, restart)
    return events


def count_schmitt(out, fps=15.0, p_on=0.6, p_off=0.4, h=0.3, credit_s=1.0, gap_s=1.0, gate=None):
    """The PoseRAC-style alternative: the net's cos φ (1 at rest, −1 at the far pose; it shrinks
    toward 0 where the net is unsure) with hysteresis: one repetition each time it goes below −h
    after having been above +h, while p(repeating) is on. Phase noise near the middle of a cycle
    cannot add counts here, only a full swing from rest to far does."""
    c, p = out[:, 0], out[:, 2]
    events = []
    side = None  # "rest" or "far"
    credit = int(round(credit_s * fps))
    gap = int(round(gap_s * fps))

    def step(t):
        nonlocal side
        if c[t] > h:
            side = "rest"
        elif c[t] < -h:
            if side == "rest" and (gate is None or gate[t]):
                events.append(t)
            side = "far"

    def restart():
        nonlocal side
        side = None

    while_repeating(p, p_on, p_off, credit, gap, step, restart)
    return events


class PhaseCounter:
    """count(out, fps, at_phase, rel_start=True) as a causal state machine, one frame at a time: what
    the appliance runs (Sources/Actions/Repetitions/RepetitionPhaseCounter.swift mirrors it). step()
    takes the net's (cos φ, sin φ, p) for the next frame and returns the frame indices of the
    repetitions counted on it (a credit replay can count repetitions of earlier frames now)."""

    def __init__(self, fps=15.0, p_on=0.6, p_off=0.4, min_mag=0.3, credit_s=1.0, gap_s=1.0, at_phase=0.75):
        self.p_on, self.p_off, self.min_mag, self.at_phase = p_on, p_off, min_mag, at_phase
        self.credit = int(round(credit_s * fps))
        self.gap = int(round(gap_s * fps))
        self.recent = []  # the last `credit` outputs before this frame, (frame, cos, sin)
        self.t = -1
        self.active = False
        self.off_since = None
        self.restart()

    def restart(self):
        self.acc = self.mark = self.prev = None

    def _step(self, t, c, s, events):
        # numpy float32 scalars throughout, as count() computes on float32 arrays (NEP 50: a Python
        # float meeting a float32 becomes float32), so the two agree event for event
        mag = np.hypot(c, s)
        if mag < self.min_mag:
            return
        phi = np.arctan2(s, c)
        if self.prev is None:
            self.acc = phi % (2 * math.pi)
            self.mark = 2 * math.pi * self.at_phase
            while self.mark - 2 * math.pi > self.acc:
                self.mark -= 2 * math.pi
            while self.mark - self.acc <= 0:
                self.mark += 2 * math.pi
            self.prev = phi
            return
        self.acc += (phi - self.prev + math.pi) % (2 * math.pi) - math.pi
        self.prev = phi
        while self.acc >= self.mark:
            events.append(t)
            self.mark += 2 * math.pi

    def step(self, out):
        c, s, p = np.float32(out[0]), np.float32(out[1]), np.float32(out[2])
        self.t += 1
        t = self.t
        events = []
        if self.active:
            if p < self.p_off:
                self.active = False
                self.off_since = t
        elif p > self.p_on:
            self.active = True
            if self.off_since is None or t - self.off_since > self.gap:
                self.restart()
                for (u, cu, su) in self.recent[-self.credit:] if self.credit else []:
                    self._step(u, cu, su, events)
            self.off_since = None
        if self.active:
            self._step(t, c, s, events)
        self.recent.append((t, c, s))
        if len(self.recent) > self.credit:
            self.recent.pop(0)
        return events
