"""Reference implementation of the chosen counter, step for step as Sources/Actions/Repetitions.

Mirror-invariant body features → principal axis of a sliding window (power iteration, warm start)
→ smoothed projection → hysteresis inside the window's range → a repetition on each move from the
rest side (the side first settled on) to the far side and back, counted on the return (or when the
signal keeps still on the far side). See RepetitionCounter.swift for the why.

`Config` holds the Swift parameters (RepetitionCounterConfiguration, paired by name in the README's
parameter list) and `credit_unnamed`, a switch for evaluate.py's replay comparison. The variants
measured in the research rounds and not adopted are in git history, not here (README.md, History).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NOSE = 0
PAIRS = [(5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16)]
BODY = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
COUNTABLE = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups"]


# The most repetitions kept while no exercise is named (RepetitionCounter.maximumPendingRepetitions).
MAX_UNNAMED = 64


@dataclass
class Config:
    fps: float = 15.0
    window_s: float = 5.0
    warmup_s: float = 1.0
    hysteresis: float = 0.35
    min_range: float = 0.1
    smoothing: int = 2
    min_half_s: float = 0.2
    gap_reset_s: float = 2.0
    min_score: float = 0.3
    min_visible: int = 7
    # On the first decision after a (re)start, run the side logic over the frames already in the
    # window, so repetitions done during the warm-up count (late, at most warmup_s).
    replay_warmup: bool = True
    # A repetition seen while no exercise is named (None: starting_up, low_confidence, no_person;
    # or "other": the classifier's label lags the movement by about its window) is kept for the
    # current set and credited, with its own time, when an exercise is named. The set ends (what
    # it kept is dropped) after set_pause_s without a repetition, when the person leaves (a motion
    # reset), or once "other" has held for longer than label_lag_s (older ones were other
    # movement). False: such repetitions are never counted (evaluate.py replay's comparison).
    credit_unnamed: bool = True
    # Labels whose repetitions come from the learned phase net (learned/, round 14) instead of the
    # principal-axis rule: its events (PhaseCounter) count for these labels, are kept for the set
    # while no exercise is named (as the rule's are) and credited when one of these is named; the
    # rule's events for these labels are not counted. Empty = the rule for every label. Squats and
    # jumping jacks since round 14, burpees since round 16, push-ups since round 17 (README.md), as
    # posewatch does.
    phase_labels: tuple = ("squats", "jumping_jacks", "burpees", "push_ups")
    set_pause_s: float = 5.0
    label_lag_s: float = 3.0
    # Leg cue gate for squats and lunges: the hip's height above the ankles in shin lengths
    # ((ankle − hip) / (ankle − knee), vertical, each leg's shin at least 0.02 box sizes, ratio in
    # [0, 5], mean of both legs) must move at least leg_cue away from its rest value (median of the
    # 0.5 s up to the last rest frame) between that frame and the crossing for the candidate to
    # count. Vertical ratios survive any per-axis scaling (Countix) and any distance. 0 = off.
    leg_cue: float = 0.08
    # A gated candidate still counts if the legs fold before it returns to rest, for at most this
    # long after the crossing (0 = until it returns to rest).
    leg_defer_s: float = 1.0
    # Upright torso for squats and lunges: a candidate counts only if, on the frame it would count,
    # the shoulders are above the hips on at least one side (vertical; the more upright side
    # decides, so an annotator's off-frame hip at y ≈ 0 on one side, as in Penn, does not reject a
    # real squat). Both are done standing up; bending over to pick something up, touching the toes
    # or lying down fold the legs and move the principal axis just as well, with the hips at or
    # above the shoulders. A side whose shoulder and hip have not both been seen since the reset
    # gives no cue (then no gate). False = off.
    upright_torso: bool = True
    # Camera zoom / cut: when the body's bones (median length ratio over the bones confidently seen
    # in both frames, at least 3) change by more than this factor from one usable pose to the next
    # and the next pose confirms it, the image's coordinate frame changed: the motion state is
    # reset as for a person re-entering (held joints are in the old frame). 0 = off.
    zoom: float = 2.5
    # A joint seen for the first time since the reset changes what the features mean (it sat at the
    # box centre): it restarts the window if that happens before the first decision. False = off.
    restart_on_new_joint: bool = True
    # A candidate repetition counts when the signal is back on the rest side (the repetition has
    # ended; its checks are made at the crossing, and the label must be the same at the return).
    # False: on reaching the far side (the crossing, half a repetition before its end).
    count_at_return: bool = True
    # With count_at_return: a repetition waiting on the far side also counts once the signal has
    # kept still there for still_s seconds (moved less than still_share of the range): the last
    # repetition of a set that ends on the far side. 0 = off.
    still_s: float = 1.0
    still_share: float = 0.1
    # Labels whose motion axis is taken from the vertical features alone (the horizontal ones,
    # x of the nose, of the pairs' midpoints and of their differences, are zeroed in the window):
    # an alternating lunge swings the body's box sideways with the leading leg, once per pair of
    # lunges, and the rule counted about half of them (README.md, round 19).
    vertical_labels: tuple = ("lunges",)
    # A new set of an exercise the rule counts: when that label is named and was not the label
    # within the last label_lag_s, the window keeps only its last new_set_window_s (the set's first
    # repetitions: the label comes 1.7–2.3 s after they begin), the sides and the axis start afresh
    # and are replayed over those frames. Whatever moved before (walking in, another exercise, a
    # big posture change) no longer holds the range, which hid the set's first repetitions for a
    # whole window (README.md, round 20). Not when a repetition was counted (under any label) in
    # those last seconds: the replay would count it again, or count the tail of the set that
    # just ended. Repetitions kept for the set from before those frames stay kept. 0 = off.
    new_set_window_s: float = 3.0

    @property
    def window(self):
        return max(4, int(round(self.window_s * self.fps)))

    @property
    def warmup(self):
        return max(3, int(round(self.warmup_s * self.fps)))


class RepetitionCounter:
    def __init__(self, config: Config | None = None):
        self.c = config or Config()
        self.counts = {label: 0 for label in COUNTABLE}
        self.session = 0
        self.events = []  # (t, label, count): t = the frame it was counted on
        self.event_at = []  # per entry of events: the frame the repetition was seen on (its crossing)
        self.reset_motion()
        self.last_pose_t = -np.inf
        self.still = False
        self.phase = None  # count_sequence sets a PhaseCounter and the net's outputs per frame
        self.phase_outputs = None
        self.frame = -1
        self.last_phase_rep_t = -np.inf
        self.label_last = {}  # exercise label -> the last frame it was the label on

    def use_phase_net(self, poses, outputs=None):
        """Counts `phase_labels` with the phase net: its outputs for the frames to come (`outputs`, or
        the installed models' for `poses`, learned/phase_net.py), one per process() call."""
        from learned.count import PhaseCounter
        if outputs is None:
            from learned import phase_net
            outputs = phase_net.outputs(poses)
        self.phase = PhaseCounter(self.c.fps)
        self.phase_outputs = outputs

    def reset_motion(self):
        """The person left (or the camera cut): the window, the held joints and the set start afresh; counts stay."""
        self.restart_window()
        self.held_pose = np.zeros((17, 2), np.float32)
        self.seen = np.zeros(17, bool)
        self.unnamed = []  # [time, passes the squat/lunge cues] of repetitions seen while no exercise was named
        self.phase_unnamed = []  # the phase net's repetitions seen while no exercise was named (times)
        self.other_since = None
        self.last_rep_t = -np.inf
        self.scale_hist = []
        self.leg_slot = -1  # -1: the waiting repetition is the labelled exercise's; else its index in unnamed

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
        self.leg_pending = False
        self.deferred = None
        # count_at_return: the index in unnamed of the repetition not ended yet (-1: none; after a
        # restart its end will not be seen in the old frame)
        self.unnamed_await = -1

    def start_new_set(self, start):
        """A new set is named (new_set_window_s): the window keeps its frames from `start` on, the
        sides and axis start afresh and the next decision replays them all. Repetitions kept from
        those frames go (the replay sees them again); older ones stay kept."""
        n = sum(1 for when in self.times if when < start)
        rows, times, cues, torsos = self.rows[n:], self.times[n:], self.cues[n:], self.torsos[n:]
        self.restart_window()
        self.rows, self.times, self.cues, self.torsos = rows, times, cues, torsos
        self.replay_all = True
        del self.unnamed[sum(1 for when, _ in self.unnamed if when < start):]  # oldest first

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
        self.frame += 1
        if t - self.last_pose_t > c.gap_reset_s:
            self.reset_motion()
        if self.unnamed and t - self.last_rep_t > c.set_pause_s:
            self.unnamed = []  # the set ended before anyone named it
            self.unnamed_await = -1
        if self.phase_unnamed and t - self.last_phase_rep_t > c.set_pause_s:
            self.phase_unnamed = []
        credited = None
        if action in COUNTABLE:
            named_before = self.label_last.get(action, -np.inf)
            self.label_last[action] = t
            start = t - c.new_set_window_s
            last_counted = self.event_at[-1] if self.event_at else -np.inf
            if (c.new_set_window_s > 0 and action not in c.phase_labels and t - named_before > c.label_lag_s
                    and last_counted < start and self.times and self.times[0] < start):
                self.start_new_set(start)
            self.other_since = None
            credited = self.credit_unnamed(action, t)
        elif action == "other":
            since = self.other_since if self.other_since is not None else t
            self.other_since = since
            if t - since > c.label_lag_s:
                self.drop_unnamed(t - c.label_lag_s)
                self.phase_unnamed = [w for w in self.phase_unnamed if w >= t - c.label_lag_s]
        if self.phase is not None:
            # every frame, with or without a pose: the net reads a fixed-rate stream
            for index in self.phase.step(self.phase_outputs[self.frame]):
                at = index / c.fps
                self.last_phase_rep_t = t
                if action in c.phase_labels:
                    credited = self.count(action, t, 1, at=at, phase=True) or credited
                elif action not in COUNTABLE and c.credit_unnamed:
                    if len(self.phase_unnamed) == MAX_UNNAMED:
                        self.phase_unnamed.pop(0)
                    self.phase_unnamed.append(at)
        if pose is None:
            return credited
        x = self.features(pose)
        if x is None:
            return credited
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
            return credited
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
            return credited
        if not self.replayed:
            self.replayed = True  # the first decision since the (re)start
            if not c.replay_warmup:
                return self.step(cur, t, lo, hi, m, t, action) or credited
            still, self.still = self.still, False
            for value, when in zip(sm[:-1], self.times[:-1]):
                if t - when > c.warmup_s and not self.replay_all:
                    continue  # older than the event latency allows
                self.step(value, when, lo, hi, m, t, action)
            self.still = still
        return self.step(cur, t, lo, hi, m, t, action) or credited

    def step(self, cur, t, lo, hi, m, now, action):
        c = self.c
        before = self.side
        result = self.side_step(cur, t, lo, hi, m, now, action)
        if result is None and self.leg_pending and self.side != 0 and self.side != self.rest:
            # A squat or lunge that reached the far side before its legs had folded enough: it
            # counts on the frame they do, as long as the signal has not gone back to rest.
            waiting = self.leg_slot >= 0
            if (not waiting and action not in ("squats", "lunges")) or (c.leg_defer_s > 0 and t - self.leg_pending_t > c.leg_defer_s):
                self.leg_pending = False
            elif self.leg_cue_moved(t):
                self.leg_pending = False
                if waiting:
                    self.unnamed[self.leg_slot][1] = True  # its legs folded: a squat or lunge once named
                    return result
                if not self.upright(t):
                    return result
                if c.count_at_return:
                    self.deferred = action
                    return result
                return self.count(action, now, 1, at=t)
        if self.unnamed_await >= 0 and self.side != 0:
            if (self.side == self.rest and before != self.rest) or (self.side != self.rest and self.still):
                self.unnamed[self.unnamed_await][0] = t  # a repetition's time is its end
                self.last_rep_t = t
                self.unnamed_await = -1
        if self.deferred is not None and self.side != 0:
            back = self.side == self.rest and before != self.rest
            held_still = self.side != self.rest and self.still
            if back or held_still:
                deferred, self.deferred = self.deferred, None
                if deferred == action:
                    result = self.count(action, now, 1, at=t) or result
                elif action not in COUNTABLE and c.credit_unnamed:
                    # no exercise named at its end (a low_confidence flicker, the label lagging):
                    # kept for the set like a repetition seen then, its cues already passed
                    if len(self.unnamed) == MAX_UNNAMED:
                        self.drop_oldest_unnamed(1)
                    self.unnamed.append([t, True])
                    self.last_rep_t = t
        return result

    def side_step(self, cur, t, lo, hi, m, now, action):
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
            return None
        if new == self.side or t - self.last_change < c.min_half_s:
            return None
        self.side = new
        self.last_change = t
        if new == self.rest:
            self.last_rest_t = t
            self.leg_pending = False
            return None
        self.last_rep_t = t
        if action not in COUNTABLE:
            if c.credit_unnamed:
                self.add_unnamed(t)
                if c.count_at_return:
                    self.unnamed_await = len(self.unnamed) - 1
            return None
        if action in ("squats", "lunges") and not self.upright(t):
            return None
        if c.leg_cue > 0 and action in ("squats", "lunges") and not self.leg_cue_moved(t):
            self.leg_pending = True
            self.leg_pending_t = t
            self.leg_slot = -1
            return None
        if c.count_at_return:
            self.deferred = action
            return None
        return self.count(action, now, 1, at=t)

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

    def add_unnamed(self, t):
        """Keeps a repetition seen while no exercise is named, with whether it passed the squat/lunge
        cues already (if its legs fold a little later, the leg-pending check marks it)."""
        if len(self.unnamed) == MAX_UNNAMED:
            self.drop_oldest_unnamed(1)
        upright = self.upright(t)
        folded = self.c.leg_cue <= 0 or self.leg_cue_moved(t)
        self.unnamed.append([t, upright and folded])
        if upright and not folded:
            self.leg_pending = True
            self.leg_pending_t = t
            self.leg_slot = len(self.unnamed) - 1

    def drop_unnamed(self, before):
        self.drop_oldest_unnamed(sum(1 for when, _ in self.unnamed if when < before))

    def drop_oldest_unnamed(self, n):
        if n <= 0:
            return
        del self.unnamed[:n]
        if self.unnamed_await >= 0:
            self.unnamed_await = max(-1, self.unnamed_await - n)
        if self.leg_pending and self.leg_slot >= 0:
            self.leg_slot -= n
            if self.leg_slot < 0:
                self.leg_pending = False

    def credit_unnamed(self, action, now):
        """An exercise is named: the set's repetitions seen before (that pass its cues) count now."""
        if action in self.c.phase_labels:
            result = None
            for when in self.phase_unnamed:
                result = self.count(action, now, 1, at=when, phase=True) or result
            self.phase_unnamed = []
            self.unnamed = []
            self.unnamed_await = -1
            if self.leg_pending and self.leg_slot >= 0:
                self.leg_pending = False
            return result
        self.phase_unnamed = []
        if not self.unnamed:
            return None
        gated = action in ("squats", "lunges")
        waiting = self.leg_slot if self.leg_pending and self.leg_slot >= 0 else -1
        result = None
        in_progress, self.unnamed_await = self.unnamed_await, -1
        for i, (when, passes) in enumerate(self.unnamed):
            if not gated or (passes and i != waiting):
                if i == in_progress and i != waiting:
                    self.deferred = action  # not ended yet: counts at its end, as under the label
                else:
                    result = self.count(action, now, 1, at=when)
        if waiting >= 0:
            if gated:
                self.leg_slot = -1  # still folding its legs: now a squat or lunge waiting to count
            else:
                self.leg_pending = False
        self.unnamed = []
        return result

    def count(self, action, now, n, at=None, phase=False):
        if action in self.c.phase_labels and not phase:
            return None  # this label's repetitions come from the phase net
        for _ in range(n):
            self.counts[action] += 1
            self.session += 1
            self.events.append((now, action, self.counts[action]))
            self.event_at.append(now if at is None else at)
        return self.events[-1]


def usable(poses, config: Config):
    """Whether each pose (float[..., 17, 3]) is one the counter uses: at least `min_visible` of the
    13 body joints scoring `min_score` or more."""
    return (poses[..., BODY, 2] >= config.min_score).sum(axis=-1) >= config.min_visible


BONES = [(5, 6), (11, 12), (5, 11), (6, 12), (5, 7), (7, 9), (6, 8), (8, 10), (11, 13), (13, 15), (12, 14), (14, 16)]


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


def count_sequence(poses: np.ndarray, action="squats", fps: float = 15.0, config: Config | None = None, phase_outputs=None):
    """Runs a sequence and returns the counter: `action` is one label for every frame (a fixed
    label, as `replay --action`) or a label per frame. `phase_outputs` (float[T, 3], the phase
    net's per frame, learned/) with `config.phase_labels` counts those labels with the net."""
    counter = RepetitionCounter(config or Config(fps=fps))
    if counter.c.phase_labels:
        counter.use_phase_net(poses if phase_outputs is None else None, phase_outputs)
    for index, pose in enumerate(poses):
        label = action if isinstance(action, str) else action[index]
        counter.process(index / fps, pose if pose[:, 2].max() > 0 else None, label)
    return counter
