"""The counter on the phase net's output: causal, per frame (README.md here).

`out` is float[T, 3] per frame: (cos φ, sin φ, p(repeating)). While p(repeating) is on (hysteresis
p_on / p_off) and the phase vector is long enough to mean something (|(cos, sin)| ≥ min_mag: the
net is unsure where in the cycle the person is when it is short), the phase is unwrapped and
accumulated; each time it passes the next mark (at_phase of a cycle: 0.75, on the way back to rest)
one repetition is counted on that frame. The first mark is the next one after the phase where
counting starts, so a repetition already past its mark then is not counted. When p(repeating)
turns on after more than `gap_s` off (or for the first time), the phase starts afresh and the
`credit_s` before are stepped first (the frames that made the net decide), so a set's first
repetition is counted at most that late instead of lost.

`PhaseCounter` runs frame by frame (posewatch's RepetitionPhaseCounter mirrors it, in float32 as
numpy computes here); `count` runs it over a whole sequence.
"""
from __future__ import annotations

import math

import numpy as np

AT_PHASE = 0.75


def count(out, fps=15.0, p_on=0.6, p_off=0.4, min_mag=0.3, credit_s=0.5, gap_s=1.0, at_phase=AT_PHASE):
    """-> list of the frame indices repetitions are counted on."""
    counter = PhaseCounter(fps, p_on, p_off, min_mag, credit_s, gap_s, at_phase)
    return [e for row in np.asarray(out, np.float32) for e in counter.step(row)]


class PhaseCounter:
    """The counter one frame at a time. step() takes the net's (cos φ, sin φ, p) for the next frame
    and returns the frame indices of the repetitions counted on it (a credit replay can count
    repetitions of earlier frames now)."""

    def __init__(self, fps=15.0, p_on=0.6, p_off=0.4, min_mag=0.3, credit_s=0.5, gap_s=1.0, at_phase=AT_PHASE):
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
        # numpy float32 scalars throughout (NEP 50: a Python float meeting a float32 becomes
        # float32); RepetitionPhaseCounter.swift computes in Float the same way
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


class PhaseNetPath:
    """The phase net's path in the counter (Swift: RepetitionPhaseNetPath, beside
    RepetitionPhaseCounter): the net's outputs for the frames to come (one per frame, person or
    not) through a PhaseCounter; each repetition, at the frame its phase passed the mark, goes to
    the set bookkeeping (counter_ledger.Ledger.net_repetition)."""

    def __init__(self, outputs, fps=15.0):
        self.fps = fps
        self.counter = PhaseCounter(fps)
        self.outputs = outputs
        self.frame = -1

    def process(self, t, action, ledger):
        self.frame += 1
        for index in self.counter.step(self.outputs[self.frame]):
            ledger.net_repetition(action, t, index / self.fps)
