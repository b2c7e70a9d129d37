"""Candidate repetition counters, measured against each other by compare.py.

Online candidates see one pose at a time (causal) and emit events; offline baselines see the whole
sequence and only serve as references for what periodicity alone can give.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import find_peaks

# Joints the counter looks at: the body without eyes and ears (Penn Action has none; MoveNet's are
# the noisiest and move with the head, which every action carries along with the torso).
BODY = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
L_SH, R_SH, L_EL, R_EL, L_WR, R_WR, L_HIP, R_HIP, L_KN, R_KN, L_AN, R_AN = 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16


def normalise(pose: np.ndarray, present: np.ndarray, mode: str) -> np.ndarray:
    """One frame's body joints → a position- and size-free vector (x0, y0, x1, y1, …)."""
    pts = pose[BODY, :2]
    ok = present[BODY]
    lo = pts[ok].min(axis=0)
    hi = pts[ok].max(axis=0)
    if mode == "sym":
        # Invariant to swapping the person's left and right (detector side swaps, alternating
        # lunges): nose, and per left/right pair the midpoint and the absolute difference.
        span = max(float(np.max(hi - lo)), 1e-6)
        q = (pts - (lo + hi) / 2) / span
        left, right = q[1::2], q[2::2]
        return np.concatenate([q[0], ((left + right) / 2).reshape(-1), np.abs(left - right).reshape(-1)])
    if mode == "axis":  # per-axis min-max: what Countix already did to its landmarks
        span = np.maximum(hi - lo, 1e-6)
        return ((pts - lo) / span).reshape(-1)
    # isotropic: centred on the box, scaled by its larger side (keeps aspect ratio)
    span = max(float(np.max(hi - lo)), 1e-6)
    return ((pts - (lo + hi) / 2) / span).reshape(-1)


def angle(a, b, c):
    """Angle at b in degrees."""
    u = a - b
    v = c - b
    cos = np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v) + 1e-9)
    return float(np.degrees(np.arccos(np.clip(cos, -1, 1))))


def action_angle(pose: np.ndarray, action: str) -> float:
    """Per-action cue: large = rest pose (standing, arms extended)."""
    p = pose[:, :2]
    if action in ("squats", "lunges"):
        return 0.5 * (angle(p[L_HIP], p[L_KN], p[L_AN]) + angle(p[R_HIP], p[R_KN], p[R_AN]))
    if action == "push_ups":
        return 0.5 * (angle(p[L_SH], p[L_EL], p[L_WR]) + angle(p[R_SH], p[R_EL], p[R_WR]))
    raise ValueError(action)


class OnlineCounter:
    """Streaming counter: a scalar motion signal per frame and hysteresis counting on it.

    signal = "pca": the first principal component of the normalised body joints over a sliding
    window (class-agnostic); "angle": a per-action joint angle.
    Thresholds adapt to the signal's range over the window: the state is "high" above
    lo + (1 − θ)·range, "low" below lo + θ·range, unchanged between (hysteresis). The side the signal
    first settles on is the rest side; a repetition is counted on returning to it.
    """

    def __init__(self, fps=15.0, signal="pca", action=None, window_s=6.0, theta=0.3, min_range=0.05,
                 smooth=3, mode="sym", count_at="rest", min_half_s=0.2, gap_reset_s=2.0, envelope="minmax",
                 warmup_s=1.0, pcs=1):
        self.pcs = pcs
        self.fps = fps
        self.signal = signal
        self.action = action
        self.n = int(round(window_s * fps))
        self.theta = theta
        self.min_range = min_range
        self.smooth = smooth
        self.mode = mode
        self.count_at = count_at
        self.min_half = int(round(min_half_s * fps))
        self.gap_reset = int(round(gap_reset_s * fps))
        self.envelope = envelope
        self.warmup = int(round(warmup_s * fps))
        self.reset()
        self.count = 0
        self.halves = 0
        self.events = []
        self.trace = []

    def reset(self):
        self.buf = []
        self.raw = []
        self.v = None
        self.V = None
        self.state = 0
        self.rest = 0
        self.gap = 0
        self.last_change = -10 ** 9
        self.last = None

    def push(self, t: int, pose: np.ndarray | None):
        if pose is None or pose[BODY, 2].sum() < 0.5 * len(BODY):
            self.gap += 1
            if self.gap > self.gap_reset:
                self.reset()
            return
        self.gap = 0
        present = pose[:, 2] > 0.3
        if self.last is not None:  # hold a missing joint at its last position
            pose = pose.copy()
            pose[~present] = self.last[~present]
            present = present | (self.last[:, 2] > 0.3)
        self.last = pose.copy()
        self.last[:, 2] = np.where(present, 1.0, 0.0)
        if self.signal == "pca":
            if not present[BODY].any():
                return
            x = normalise(pose, present, self.mode)
        else:
            x = np.array([action_angle(pose, self.action) / 180.0])
        self.buf.append(x)
        if len(self.buf) > self.n:
            self.buf.pop(0)
        if len(self.buf) < self.warmup:
            return
        X = np.asarray(self.buf)
        mu = X.mean(axis=0)
        D = X - mu
        if self.signal == "pca":
            C = D.T @ D
            if self.pcs > 1:
                V = np.linalg.eigh(C)[1][:, ::-1][:, :self.pcs]
                if self.V is not None:
                    V = V * np.sign(np.sum(V * self.V, axis=0) + 1e-12)
                self.V = V
                S = D @ V
                n = len(S)
                lmin, lmax = int(0.5 * self.fps), min(int(3.5 * self.fps), n // 2)
                best, s = -2, S[:, 0]
                if lmax > lmin:
                    for j in range(self.pcs):
                        x = S[:, j]
                        e0 = np.dot(x, x) / n + 1e-12
                        ac = max(np.dot(x[:-l], x[l:]) / (n - l) for l in range(lmin, lmax + 1)) / e0
                        if ac > best:
                            best, s = ac, x
            else:
                v = self.v if self.v is not None else np.linalg.eigh(C)[1][:, -1]
                for _ in range(2):
                    v = C @ v
                    v /= np.linalg.norm(v) + 1e-12
                if self.v is not None and np.dot(v, self.v) < 0:
                    v = -v
                self.v = v
                s = D @ v
        else:
            s = D[:, 0]
        if self.smooth > 1:
            k = self.smooth
            c = np.cumsum(np.concatenate([[0.0], s]))
            sm = np.empty_like(s)
            for i in range(len(s)):
                j = max(0, i - k + 1)
                sm[i] = (c[i + 1] - c[j]) / (i + 1 - j)
        else:
            sm = s
        if self.envelope == "minmax":
            lo, hi = sm.min(), sm.max()
        else:
            lo, hi = np.percentile(sm, [5, 95])
        r = hi - lo
        self.trace.append((t, sm[-1], lo + self.theta * r, hi - self.theta * r, r))
        if r < self.min_range:
            return
        cur = sm[-1]
        new = self.state
        if cur >= hi - self.theta * r:
            new = 1
        elif cur <= lo + self.theta * r:
            new = -1
        if self.signal == "angle":
            self.rest = 1  # extended joints are the rest pose
        if self.state == 0:
            if new != 0:
                self.state = new
                if self.rest == 0:
                    self.rest = new
            return
        if new != self.state and t - self.last_change >= self.min_half:
            self.state = new
            self.last_change = t
            self.halves += 1
            if self.count_at == "half":
                self.count = (self.halves + 1) // 2
            elif (self.count_at == "rest" and new == self.rest) or (self.count_at == "high" and new == 1):
                self.count += 1
                self.events.append(t)


def run_online(poses: np.ndarray, **kw) -> OnlineCounter:
    c = OnlineCounter(**kw)
    for t, p in enumerate(poses):
        c.push(t, p if p[:, 2].sum() > 0 else None)
    return c


def full_pc1(poses: np.ndarray, mode="iso") -> np.ndarray:
    """Whole-sequence first principal component of the normalised joints (frames with a pose)."""
    ok = poses[:, BODY, 2].sum(axis=1) >= 0.5 * len(BODY)
    X = np.array([normalise(p, p[:, 2] > 0.3, mode) for p in poses[ok]])
    if len(X) < 3:
        return np.zeros(0)
    D = X - X.mean(axis=0)
    w, V = np.linalg.eigh(D.T @ D)
    return D @ V[:, -1]


def offline_peaks(poses, fps=15.0, rel_prominence=0.35, mode="iso"):
    s = full_pc1(poses, mode)
    if len(s) < 5:
        return 0
    s = np.convolve(s, np.ones(3) / 3, mode="same")
    r = np.percentile(s, 95) - np.percentile(s, 5)
    counts = [len(find_peaks(sign * s, prominence=rel_prominence * r, distance=max(1, int(0.4 * fps)))[0])
              for sign in (1, -1)]
    return int(round(np.mean(counts)))


def offline_spectral(poses, fps=15.0, mode="iso"):
    """Duration × dominant frequency (autocorrelation peak in 0.5–4 s)."""
    s = full_pc1(poses, mode)
    if len(s) < 10:
        return 0
    s = s - s.mean()
    ac = np.correlate(s, s, mode="full")[len(s) - 1:]
    ac /= ac[0] + 1e-12
    lo, hi = int(0.5 * fps), min(int(4.0 * fps), len(ac) - 1)
    if hi <= lo + 1:
        return 0
    lag = lo + int(np.argmax(ac[lo:hi]))
    return int(round(len(s) / lag))


class BandCounter(OnlineCounter):
    """Period-adaptive variant: the PC1 signal is band-passed around its own dominant period.

    Each frame: PC1 of the window → autocorrelation picks the period P (0.5–3.5 s) and its strength
    → f = mean over the last P/4 frames − mean over the last P frames (a causal band-pass that
    removes drift and steps slower than a repetition and jitter faster than one) → hysteresis at
    ±θ·A, A the largest |f| over the last 2P frames. Counting is gated on periodicity strength.
    """

    def __init__(self, *a, window_s=8.0, min_period_s=0.5, max_period_s=3.5, gate=0.2, short_div=4,
                 amp_span=2.0, theta=0.35, min_range=0.03, **kw):
        super().__init__(*a, window_s=window_s, theta=theta, min_range=min_range, **kw)
        self.lmin = int(round(min_period_s * self.fps))
        self.lmax = int(round(max_period_s * self.fps))
        self.gate = gate
        self.short_div = short_div
        self.amp_span = amp_span
        self.warmup = self.lmin * 2

    def push(self, t, pose):
        if pose is None or pose[BODY, 2].sum() < 0.5 * len(BODY):
            self.gap += 1
            if self.gap > self.gap_reset:
                self.reset()
            return
        self.gap = 0
        present = pose[:, 2] > 0.3
        if self.last is not None:
            pose = pose.copy()
            pose[~present] = self.last[~present]
            present = present | (self.last[:, 2] > 0.3)
        self.last = pose.copy()
        self.last[:, 2] = np.where(present, 1.0, 0.0)
        x = normalise(pose, present, self.mode)
        self.buf.append(x)
        if len(self.buf) > self.n:
            self.buf.pop(0)
        n = len(self.buf)
        if n < self.warmup:
            return
        X = np.asarray(self.buf)
        D = X - X.mean(axis=0)
        C = D.T @ D
        v = self.v if self.v is not None else np.linalg.eigh(C)[1][:, -1]
        for _ in range(2):
            v = C @ v
            v /= np.linalg.norm(v) + 1e-12
        if self.v is not None and np.dot(v, self.v) < 0:
            v = -v
        self.v = v
        s = D @ v
        lmax = min(self.lmax, n // 2)
        if lmax <= self.lmin:
            return
        e0 = np.dot(s, s) / n + 1e-12
        ac = np.array([np.dot(s[:-l], s[l:]) / (n - l) for l in range(self.lmin, lmax + 1)]) / e0
        # first strong peak would be better against harmonics; take the maximum for now
        k = int(np.argmax(ac))
        P = self.lmin + k
        strength = ac[k]
        c = np.concatenate([[0.0], np.cumsum(s)])
        ks = max(1, P // self.short_div)
        span = min(n, int(self.amp_span * P))
        idx = np.arange(n - span, n)
        lo_s = np.maximum(idx + 1 - ks, 0)
        lo_l = np.maximum(idx + 1 - P, 0)
        f = (c[idx + 1] - c[lo_s]) / (idx + 1 - lo_s) - (c[idx + 1] - c[lo_l]) / (idx + 1 - lo_l)
        A = np.max(np.abs(f))
        cur = f[-1]
        self.trace.append((t, cur, -self.theta * A, self.theta * A, strength))
        if A < self.min_range or strength < self.gate:
            return
        new = self.state
        if cur >= self.theta * A:
            new = 1
        elif cur <= -self.theta * A:
            new = -1
        if self.state == 0:
            if new != 0:
                self.state = new
                if self.rest == 0:
                    self.rest = new
            return
        if new != self.state and t - self.last_change >= self.min_half:
            self.state = new
            self.last_change = t
            if new == self.rest:
                self.count += 1
                self.events.append(t)


def run_band(poses, **kw):
    c = BandCounter(**kw)
    for t, p in enumerate(poses):
        c.push(t, p if p[:, 2].sum() > 0 else None)
    return c
