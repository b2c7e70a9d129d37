"""The motion rule (Swift: RepetitionMotionRule.swift with RepetitionMotionFeatures.swift).

Mirror-invariant body features → principal axis of a sliding window (power iteration, warm start)
→ smoothed projection → hysteresis inside the window's range → a repetition on each move from the
rest side (the side first settled on) to the far side and back, counted on the return (or when the
signal keeps still on the far side); squats and lunges must fold the legs with the torso upright.
Takes each frame's time, pose and label; gives its repetitions to the set bookkeeping
(counter_ledger.Ledger): counted under an exercise's label, kept while none is named.
"""
from __future__ import annotations

import numpy as np

from counter_ledger import COUNTABLE, STANDING_LEG

NOSE = 0
PAIRS = [(5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16)]
BODY = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
BONES = [(5, 6), (11, 12), (5, 11), (6, 12), (5, 7), (7, 9), (6, 8), (8, 10), (11, 13), (13, 15), (12, 14), (14, 16)]


class MotionRule:
    def __init__(self, config, ledger):
        self.c = config
        self.ledger = ledger
        self.last_pose_t = -np.inf
        self.still = False
        self.reset_motion()

    def reset_motion(self):
        """The person left (or the camera cut): the window, the held joints and the set start afresh."""
        self.restart_window()
        self.held_pose = np.zeros((17, 2), np.float32)
        self.seen = np.zeros(17, bool)
        self.scale_hist = []
        self.ledger.person_left()

    def restart_window(self):
        """The window and the sides start afresh; the held joints (and counts) stay."""
        self.rows, self.times, self.cues, self.torsos = [], [], [], []
        self.replayed = False
        self.replay_all = False  # the next first decision replays the whole window (start_new_set)
        self.axis = None
        self.side = 0
        self.rest = 0
        self.last_change = -np.inf
        self.last_rest_t = -np.inf
        # a squat or lunge of the current label waiting for its legs to fold (a kept repetition
        # waits the same way: ledger.leg_slot)
        self.leg_pending = False
        self.deferred = None
        self.ledger.window_restarted()

    def holds_frames_before(self, start):
        return bool(self.times) and self.times[0] < start

    def start_new_set(self, start):
        """A new set is named (new_set_window_s): the window keeps its frames from `start` on, the
        sides and axis start afresh and the next decision replays them all."""
        n = sum(1 for when in self.times if when < start)
        rows, times, cues, torsos = self.rows[n:], self.times[n:], self.cues[n:], self.torsos[n:]
        self.restart_window()
        self.rows, self.times, self.cues, self.torsos = rows, times, cues, torsos
        self.replay_all = True

    def adopt(self, handover, action):
        """What Ledger.credit handed back as `action` was named."""
        awaits, folding = handover
        if awaits:
            self.deferred = action
        if folding:
            self.leg_pending = True

    def scale_changed(self, pose, conf):
        hist = self.scale_hist
        hist.append((pose[:, :2].astype(np.float64), conf))
        if len(hist) > 3:
            hist.pop(0)
        if len(hist) < 3:
            return False
        r1 = bone_ratio(hist[1], hist[0])
        r2 = bone_ratio(hist[2], hist[0])
        z = self.c.zoom
        return (r1 > z and r2 > z) or (r1 < 1 / z and r2 < 1 / z)

    def features(self, pose):
        c = self.c
        if not usable(pose, c):
            return None
        conf = pose[:, 2] >= c.min_score
        if c.zoom > 0 and self.scale_changed(pose, conf):
            self.reset_motion()
            self.scale_hist = [(pose[:, :2].astype(np.float64), conf)]
        body = np.zeros(17, bool)
        body[BODY] = True
        upd = conf & body
        if c.restart_on_new_joint and not self.replayed and self.seen.any() and (upd & ~self.seen).any():
            self.restart_window()
        self.held_pose[upd] = pose[upd, :2]
        self.seen |= upd
        x, q = self.feature_vector(self.held_pose, self.seen)
        legs = []
        for hip, knee, ankle in ((11, 13, 15), (12, 14, 16)):
            shin = max(float(q[ankle, 1] - q[knee, 1]), 0.02)
            legs.append(min(max(float(q[ankle, 1] - q[hip, 1]) / shin, 0.0), 5.0))
        # Unknown (NaN) until hips, knees and ankles have all been seen since the reset: a camera
        # that cuts the feet off gives no cue, and then the gate does not apply.
        self.leg_height = (legs[0] + legs[1]) / 2 if self.seen[11:17].all() else float("nan")
        # the hips' height below the shoulders on the more upright side (NaN: no side seen)
        sides = [float(q[hip, 1] - q[shoulder, 1]) for shoulder, hip in ((5, 11), (6, 12)) if self.seen[shoulder] and self.seen[hip]]
        self.torso = max(sides) if sides else float("nan")
        return x

    @staticmethod
    def feature_vector(held, seen):
        pts = held[seen]
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        centre = (lo + hi) / 2
        scale = 1 / max(float(np.max(hi - lo)), 1e-6)
        q = np.where(seen[:, None], (held - centre) * scale, 0.0)
        left = q[[p[0] for p in PAIRS]]
        right = q[[p[1] for p in PAIRS]]
        return np.concatenate([q[NOSE], ((left + right) / 2).reshape(-1), np.abs(left - right).reshape(-1)]), q

    def process(self, t, pose, action):
        c = self.c
        if pose is None:
            return
        x = self.features(pose)
        if x is None:
            return
        self.last_pose_t = t
        self.rows.append(x)
        self.cues.append(self.leg_height)
        self.torsos.append(self.torso)
        self.times.append(t)
        if len(self.rows) > c.window:
            self.rows.pop(0)
            self.cues.pop(0)
            self.torsos.pop(0)
            self.times.pop(0)
        if len(self.rows) < c.warmup:
            return
        D = np.asarray(self.rows, np.float64)
        D = D - D.mean(axis=0)
        vertical = action in c.vertical_labels
        if vertical:
            D[:, 0::2] = 0.0  # the horizontal features
        iterations = 2
        if self.axis is None:
            self.axis = np.zeros(D.shape[1])
            variance = (D * D).sum(axis=0)
            if vertical:
                variance[0::2] = -1.0  # an axis along a left-out feature would never move
            self.axis[int(np.argmax(variance))] = 1
            iterations = 8
        for _ in range(iterations):
            w = D.T @ (D @ self.axis)
            norm = np.linalg.norm(w)
            if norm ** 2 <= 1e-18:
                break
            self.axis = w / norm
        s = D @ self.axis
        k = c.smoothing
        cs = np.concatenate([[0.0], np.cumsum(s)])
        i = np.arange(len(s))
        j = np.maximum(0, i - k + 1)
        sm = (cs[i + 1] - cs[j]) / (i + 1 - j)
        lo, hi = sm.min(), sm.max()
        cur = sm[-1]
        r = hi - lo
        m = c.hysteresis * r
        # the signal has kept still for still_s (moved less than still_share of the range)
        ns = max(2, int(round(c.still_s * c.fps)))
        self.still = c.still_s > 0 and len(sm) >= ns and float(np.ptp(sm[-ns:])) < c.still_share * r
        if r < c.min_range:
            return
        if not self.replayed:
            self.replayed = True  # the first decision since the (re)start
            if not c.replay_warmup:
                self.step(cur, t, lo, hi, m, t, action)
                return
            still, self.still = self.still, False
            for value, when in zip(sm[:-1], self.times[:-1]):
                if t - when > c.warmup_s and not self.replay_all:
                    continue  # older than the event latency allows
                self.step(value, when, lo, hi, m, t, action)
            self.still = still
        self.step(cur, t, lo, hi, m, t, action)

    def step(self, cur, t, lo, hi, m, now, action):
        c = self.c
        ledger = self.ledger
        before = self.side
        counted = self.side_step(cur, t, lo, hi, m, now, action)
        waiting = ledger.leg_slot >= 0
        if not counted and (self.leg_pending or waiting) and self.side != 0 and self.side != self.rest:
            # A squat or lunge that reached the far side before its legs had folded enough: it
            # counts on the frame they do, as long as the signal has not gone back to rest.
            if (not waiting and action not in STANDING_LEG) or (c.leg_defer_s > 0 and t - self.leg_pending_t > c.leg_defer_s):
                self.stop_waiting_for_legs()
            elif self.leg_cue_moved(t):
                if waiting:
                    ledger.legs_folded()
                    self.stop_waiting_for_legs()
                    return
                self.stop_waiting_for_legs()
                if not self.upright(t):
                    return
                if c.count_at_return:
                    self.deferred = action
                    return
                ledger.count(action, now, 1, at=t)
                return
        if self.side != 0:
            if (self.side == self.rest and before != self.rest) or (self.side != self.rest and self.still):
                ledger.repetition_ended(t)
        if self.deferred is not None and self.side != 0:
            back = self.side == self.rest and before != self.rest
            held_still = self.side != self.rest and self.still
            if back or held_still:
                deferred, self.deferred = self.deferred, None
                if deferred == action:
                    ledger.count(action, now, 1, at=t)
                elif action not in COUNTABLE and c.credit_unnamed:
                    # no exercise named at its end (a low_confidence flicker, the label lagging):
                    # kept for the set like a repetition seen then, its cues already passed
                    ledger.keep(t, True, ended=True)

    def stop_waiting_for_legs(self):
        self.leg_pending = False
        self.ledger.leg_slot = -1

    def side_step(self, cur, t, lo, hi, m, now, action):
        """Moves between the sides; a move to the far side is one repetition seen. True when it
        counted that repetition on the spot (without count_at_return)."""
        c = self.c
        new = self.side
        if cur >= hi - m:
            new = 1
        elif cur <= lo + m:
            new = -1
        if (self.rest == 1 and cur >= hi - m) or (self.rest == -1 and cur <= lo + m):
            self.last_rest_t = t
        if self.side == 0:
            if new != 0:
                self.last_rest_t = t
                self.side = new
                if self.rest == 0:
                    self.rest = new
            return False
        if new == self.side or t - self.last_change < c.min_half_s:
            return False
        self.side = new
        self.last_change = t
        if new == self.rest:
            self.last_rest_t = t
            self.stop_waiting_for_legs()
            return False
        self.ledger.last_rep_t = t
        if action not in COUNTABLE:
            if c.credit_unnamed:
                upright = self.upright(t)
                folded = c.leg_cue <= 0 or self.leg_cue_moved(t)
                self.ledger.keep(t, upright and folded, waits_for_legs=upright and not folded)
                if upright and not folded:  # its legs may fold a little later: step() marks it then
                    self.leg_pending = False
                    self.leg_pending_t = t
                if c.count_at_return:
                    self.ledger.unnamed_await = len(self.ledger.unnamed) - 1
            return False
        if action in STANDING_LEG and not self.upright(t):
            return False
        if c.leg_cue > 0 and action in STANDING_LEG and not self.leg_cue_moved(t):
            self.leg_pending = True
            self.leg_pending_t = t
            self.ledger.leg_slot = -1
            return False
        if c.count_at_return:
            self.deferred = action
            return False
        return self.ledger.count(action, now, 1, at=t) is not None

    def upright(self, t):
        """The shoulders above the hips on the frame at t (True without a cue or with the check off)."""
        if not self.c.upright_torso:
            return True
        idx = [i for i, tt in enumerate(self.times) if tt <= t + 1e-9]
        if not idx:
            return True
        torso = self.torsos[idx[-1]]
        return np.isnan(torso) or torso >= 0.0

    def leg_cue_moved(self, t):
        c = self.c
        cues = self.cues
        times = self.times
        i_end = max(i for i, tt in enumerate(times) if tt <= t + 1e-9)
        starts = [i for i, tt in enumerate(times) if tt <= self.last_rest_t + 1e-9]
        i_rest = starts[-1] if starts else 0
        lo = max(0, i_rest - int(round(0.5 * c.fps)))
        rest = float(np.median(cues[lo:i_rest + 1]))
        if any(np.isnan(v) for v in cues[lo:i_end + 1]):
            return True  # the legs were not all seen yet: no cue, the generic path counts
        moved = max(abs(v - rest) for v in cues[i_rest:i_end + 1])
        return moved >= c.leg_cue


def usable(poses, config):
    """Whether each pose (float[..., 17, 3]) is one the counter uses: at least `min_visible` of the
    13 body joints scoring `min_score` or more."""
    return (poses[..., BODY, 2] >= config.min_score).sum(axis=-1) >= config.min_visible


def bone_ratio(now, before):
    """Median ratio of bone lengths (now / before) over the bones confident in both; 1 if < 3."""
    (p1, c1), (p0, c0) = now, before
    ratios = []
    for a, b in BONES:
        if c1[a] and c1[b] and c0[a] and c0[b]:
            l1 = float(np.hypot(*(p1[a] - p1[b])))
            l0 = float(np.hypot(*(p0[a] - p0[b])))
            if l0 > 0 and l1 > 0:
                ratios.append(l1 / l0)
    return float(np.median(ratios)) if len(ratios) >= 3 else 1.0
