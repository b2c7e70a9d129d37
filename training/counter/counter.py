"""Reference implementation of the chosen counter, step for step as Sources/Actions/Repetitions.

Mirror-invariant body features → principal axis of a sliding window (power iteration, warm start)
→ smoothed projection → hysteresis inside the window's range → a repetition on each move from the
rest side (the side first settled on) to the far side and back, counted on the return (or when the
signal keeps still on the far side). See RepetitionCounter.swift for the why.
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
    # "window": thresholds at fixed places in the window's range; "zigzag": a side change needs the
    # signal to move hysteresis·range away from its extreme since the last change.
    rule: str = "window"
    zigzag: float = 0.6
    # Periodicity gate: repetitions are only credited while the window's signal repeats itself
    # (normalised autocorrelation peak over 0.5–3.5 s lags ≥ gate); ones seen before that are held
    # for at most one window and credited when it does. 0 = no gate.
    gate: float = 0.0
    # A move from the rest side to the far side that takes longer than this (from the last frame
    # the signal was on the rest side) is a drift or a walk, not a repetition. 0 = no limit.
    max_excursion_s: float = 0.0
    # The thresholds' range is taken over the last envelope_s seconds (≤ window_s): long enough to
    # hold the slowest repetition, short enough to follow a change of amplitude. 0 = the window.
    envelope_s: float = 0.0
    # Range from these percentiles of the window instead of min/max (0 = min/max): a one-off spike
    # (a detection glitch) then does not widen the thresholds for a whole window.
    envelope_pct: float = 0.0
    # Robust range: min(max − min, std_range·std), thresholds around the mean when the std wins, so a
    # one-off step (zoom, getting down) widens the thresholds less. 0 = off. 2.83 = a sine's max−min.
    std_range: float = 0.0
    # On the first decision after a (re)start, run the side logic over the frames already in the
    # window, so repetitions done during the warm-up count (late, at most warmup_s).
    replay_warmup: bool = True
    replay_counts: bool = True
    replay_s: float | None = None  # how far back (None: warmup_s, so events are at most that late)
    # Repeat check: a repetition counts when its pose at the far-side crossing is within
    # similar·range (feature distance) of an earlier crossing in the last memory_s seconds; the
    # first of a kind waits (pending) for the next one to confirm it. 0 = off.
    similar: float = 0.0
    memory_s: float = 8.0
    min_period_s: float = 0.5
    max_period_s: float = 3.5
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
    # rule's events for these labels are not counted. Empty = the rule for every label. Round 14
    # (README.md): squats and jumping jacks, as posewatch does.
    phase_labels: tuple = ("squats", "jumping_jacks")
    set_pause_s: float = 5.0
    label_lag_s: float = 3.0
    # Age-weighted range (measured, rejected): each sample's distance from the window's median is
    # weighted by exp(−age/decay_s) before taking the extremes, so a big move fades from the
    # thresholds instead of holding them for a whole window. 0 = off.
    decay_s: float = 0.0
    # Adaptive minimum period (measured, rejected): a repetition arriving sooner than interval_ratio
    # × the median of the last interval_memory intervals between repetitions (candidates, counted or
    # not) is rejected; an interval longer than interval_reset × that median is a pause and empties
    # the history, so a faster set after a pause starts fresh. 0 = off.
    interval_ratio: float = 0.0
    interval_memory: int = 3
    # Leg cue gate for squats and lunges: the hip's height above the ankles in shin lengths
    # ((ankle − hip) / (ankle − knee), vertical, each leg's shin at least 0.02 box sizes, ratio in
    # [0, 5], mean of both legs) must move at least leg_cue away from its rest value (median of the
    # 0.5 s up to the last rest frame) between that frame and the crossing for the candidate to
    # count. Vertical ratios survive any per-axis scaling (Countix) and any distance. 0 = off.
    leg_cue: float = 0.08
    leg_signal: float = 0.0  # >0: squats/lunges count on the leg cue itself; its minimum range (shin lengths)
    leg_valid_only: bool = False  # variant: no cue while an ankle is not below its knee
    leg_signal_actions: tuple = ("squats", "lunges")
    arm_cue: float = 0.0  # variant: push-ups gated on (wrist − elbow) / (wrist − shoulder), vertical
    leg_defer_s: float = 1.0  # … for at most this long after the crossing (0 = until it returns to rest)
    leg_defer: bool = True  # a gated candidate still counts if the legs fold before it returns to rest
    leg_cue_rest: str = "median"  # "median": of the 0.5 s up to the last rest frame; "frame": that frame alone
    interval_reset: float = 2.5
    # Camera zoom / cut: when the body's bones (median length ratio over the bones confidently seen
    # in both frames, at least 3) change by more than this factor from one usable pose to the next
    # and the next pose confirms it, the image's coordinate frame changed: the motion state is
    # reset as for a person re-entering (held joints are in the old frame). 0 = off.
    zoom: float = 2.5
    # variant: a cut in the features (one frame's feature change ≥ cut_size body sizes and ≥ cut_ratio
    # times the changes just before and after it) restarts the window. 0 = off.
    # variant: squats/lunges also count on the leg cue's own hysteresis (minimum range leg_union
    # shin lengths), once per leg excursion: a fold the principal axis missed counts, one it
    # counted does not count twice. 0 = off.
    leg_union: float = 0.0
    cut_size: float = 0.0
    cut_ratio: float = 4.0
    detrend_s: float = 0.0  # variant: the signal minus its trailing mean over this long (0 = off)
    # A joint seen for the first time since the reset changes what the features mean (it sat at the
    # box centre): "warmup" restarts the window if that happens before the first decision,
    # "always" at any time, "backfill" (measured: the same counts everywhere) gives it its first
    # position in all the window's rows and makes their features again, "" does nothing.
    new_joint: str = "warmup"
    # Upright torso for squats and lunges (fifth round): a candidate counts only if, on the frame it
    # would count, the shoulders are above the hips on at least one side (vertical). Both are done
    # standing up; bending over to pick something up, touching the toes or lying down fold the legs
    # and move the principal axis just as well, with the hips at or above the shoulders. A side
    # whose shoulder and hip have not both been seen since the reset gives no cue (then no gate).
    # None = off; a number > 0 asks for that margin in shin lengths (needs the legs seen too).
    torso_min: float | None = 0.0
    # "max": the more upright side decides (an annotator's off-frame hip at y ≈ 0 on one side, as
    # in Penn, does not reject a real squat); "mean": the mean of both sides (both must be seen).
    torso_sides: str = "max"
    # "frame": judged on the counting frame; "excursion": on every frame since the last rest frame.
    torso_span: str = "frame"

    # Fifth-round variants, measured and not adopted (training/counter/README.md):
    # variant: push-ups are done with the hands on the floor: a candidate counts only if, on its
    # counting frame, a wrist is at least as low as its knee (image y) minus pushup_margin box sizes
    # on at least one side. None = off.
    pushup_wrists: float | None = None
    # variant: the thresholds' range over the last adaptive_envelope × the median of the last
    # (up to 3) intervals between candidate repetitions (at least adaptive_min_s), so a one-off
    # big move leaves the range after a few cycles of the set instead of a whole window. 0 = off.
    adaptive_envelope: float = 0.0
    adaptive_min_s: float = 2.0
    # variant: the range ignores excursions shorter than this (hi = the largest value held for
    # this long, lo likewise: a morphological opening), so a short spike does not set the
    # thresholds. 0 = off.
    opening_s: float = 0.0
    # When a candidate repetition is counted: "return" (chosen, issue 23) when the signal is back on
    # the rest side (the repetition has ended; its checks are made at the crossing as before, and
    # the label must be the same at the return), "far" on reaching the far side (the crossing, half
    # a repetition before its end: before issue 23), "exit" (variant) when it leaves the far band.
    count_at: str = "return"
    # variant: once the window holds cycle_range complete cycles (rest → far → rest), the range is
    # the median (cycle_stat "median") or the extremes ("extreme") of their highs and lows (in the
    # current signal), widened by cycle_margin, if narrower than the window's: a single big move
    # (racking, getting up) then does not hold the thresholds. cycle_keep_min: not below
    # min_range. 0 = off.
    cycle_range: int = 0
    cycle_margin: float = 1.0
    cycle_stat: str = "median"
    cycle_keep_min: bool = False
    # variant: amplitude template. A candidate's amplitude (its far extreme minus the rest-side
    # extreme before it, along the signal) is known when it returns to rest (template_at "return")
    # or leaves the far band ("exit"). Once template_n counted amplitudes lie within
    # template_memory_s, a candidate waits for that moment and counts then only if its amplitude
    # is within [template_lo, template_hi] × their median (0 = no bound). Both 0 = off.
    template_lo: float = 0.0
    template_hi: float = 0.0
    template_n: int = 2
    template_at: str = "return"
    template_memory_s: float = 10.0
    # variant (session 9): when the signal has kept its side for stuck_s seconds, the range is taken
    # over the last stuck_s seconds only (if at least stuck_min × the window's range and min_range),
    # so repetitions shallower than an earlier big move are seen before that move leaves the
    # window. 0 = off.
    stuck_s: float = 0.0
    stuck_min: float = 0.0
    stuck_ac: float = 0.0  # … and only if the last stuck_ac_s seconds repeat themselves (autocorrelation peak over 0.4–2 s lags ≥ this)
    stuck_ac_s: float = 4.0
    # variant (session 9): the principal axis from the covariance of the changes over velocity_lag
    # frames ("velocity") instead of the positions ("position"), or of both stacked ("mix", the
    # changes scaled by mix_weight): a one-off big move is one large step among many small ones
    # there, so it should hold the axis less. Measured: worse (jitter and walking dominate the changes).
    axis_from: str = "position"
    # with count_at "return": a repetition waiting on the far side also counts once the signal has
    # kept still there for still_s seconds (moved less than still_share of the range): the last
    # repetition of a set that ends on the far side. 0 = off.
    still_s: float = 1.0
    still_share: float = 0.1
    mix_weight: float = 1.0
    velocity_lag: int = 1

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
        self.last_action = None
        self.events = []  # (t, label, count): t = the frame it was counted on
        self.event_at = []  # per entry of events: the frame the repetition was seen on (its crossing)
        self.candidates = []  # (decision time, crossing time, last time on the rest side)
        self.trace = []  # (t, signal, near, far)
        self.reset_motion()
        self.last_pose_t = -np.inf
        self.cuts = 0
        self.still = False
        self.phase = None  # count_sequence sets a PhaseCounter and the net's outputs per frame
        self.phase_outputs = None
        self.frame = -1
        self.last_phase_rep_t = -np.inf

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
        self.rows = []
        self.held_rows = []
        self.times = []
        self.replayed = False
        self.axis = None
        self.held_pose = np.zeros((17, 2), np.float32)
        self.seen = np.zeros(17, bool)
        self.side = 0
        self.rest = 0
        self.last_change = -np.inf
        self.settle_t = -np.inf
        self.extreme = 0.0
        self.pending = []
        self.last_rest_t = -np.inf
        self.crossings = []
        self.pending_similar = []
        self.last_candidate_t = None
        self.intervals = []
        self.cues = []
        self.torsos = []
        self.wks = []
        self.arm_cues = []
        self.leg_pending = False
        self.leg_slot = -1  # -1: the waiting repetition is the labelled exercise's; else its index in unnamed
        self.unnamed = []  # [time, passes the squat/lunge cues] of repetitions seen while no exercise was named
        self.phase_unnamed = []  # the phase net's repetitions seen while no exercise was named (times)
        self.unnamed_await = -1  # count_at != "far": index of the unnamed repetition not ended yet
        self.other_since = None
        self.last_rep_t = -np.inf
        self.scale_hist = []
        self.cut_hist = []
        self.u_side = 0
        self.u_rest = 0
        self.u_change = -np.inf
        self.u_pc1 = False
        self.u_counted = False
        self.u_bypass = False
        self.cand_times = []
        self.amps = []
        self.exc = None
        self.rest_extreme = None
        self.deferred = None
        self.cycles = []
        self.cycle_start = None

    def restart_window(self):
        """The window and the sides start afresh; the held joints (and counts) stay."""
        self.rows, self.held_rows, self.times, self.cues, self.arm_cues = [], [], [], [], []
        self.torsos = []
        self.wks = []
        self.replayed = False
        self.axis = None
        self.side = 0
        self.rest = 0
        self.last_change = -np.inf
        self.settle_t = -np.inf
        self.last_rest_t = -np.inf
        self.leg_pending = False
        self.cand_times = []
        self.amps = []
        self.exc = None
        self.rest_extreme = None
        self.deferred = None
        self.unnamed_await = -1  # its end will not be seen in the old frame
        self.cycles = []
        self.cycle_start = None

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
        conf = pose[:, 2] >= c.min_score
        if conf[BODY].sum() < c.min_visible:
            return None
        if c.zoom > 0 and self.scale_changed(pose, conf):
            self.reset_motion()
            self.scale_hist = [(pose[:, :2].astype(np.float64), conf)]
        body = np.zeros(17, bool)
        body[BODY] = True
        upd = conf & body
        if c.new_joint and self.seen.any() and (upd & ~self.seen).any() and (c.new_joint == "always" or not self.replayed):
            self.restart_window()
        new = upd & ~self.seen
        back_fill = c.new_joint == "backfill" and self.seen.any() and new.any() and self.rows
        self.held_pose[upd] = pose[upd, :2]
        self.seen |= upd
        if back_fill:
            # Until now the new joint sat at the box centre in the window's rows: it takes the
            # position it is first seen at in all of them (holding, backwards), and their features
            # are made again, so its first sighting is not a step in the signal.
            for k, held in enumerate(self.held_rows):
                held[new] = pose[new, :2]
                self.rows[k] = self.feature_vector(held, self.seen)[0]
        x, q = self.feature_vector(self.held_pose, self.seen)
        legs = []
        for hip, knee, ankle in ((11, 13, 15), (12, 14, 16)):
            shin = max(float(q[ankle, 1] - q[knee, 1]), 0.02)
            legs.append(min(max(float(q[ankle, 1] - q[hip, 1]) / shin, 0.0), 5.0))
        # Unknown (NaN) until hips, knees and ankles have all been seen since the reset: a camera
        # that cuts the feet off gives no cue, and then the gate does not apply.
        valid = self.seen[11:17].all() and (not self.c.leg_valid_only or all(q[a, 1] - q[k, 1] >= 0.02 for k, a in ((13, 15), (14, 16))))
        self.leg_height = (legs[0] + legs[1]) / 2 if valid else float("nan")
        wk = [float(q[w, 1] - q[k, 1]) for w, k in ((9, 13), (10, 14)) if self.seen[w] and self.seen[k]]
        self.wrist_knee = max(wk) if wk else float("nan")
        self.torso = float("nan")
        sides = [float(q[hip, 1] - q[shoulder, 1]) for shoulder, hip in ((5, 11), (6, 12)) if self.seen[shoulder] and self.seen[hip]]
        if sides and (self.c.torso_sides == "max" or len(sides) == 2):
            torso = max(sides) if self.c.torso_sides == "max" else sum(sides) / 2
            if self.c.torso_min is not None and self.c.torso_min > 0:
                # in shin lengths (mean of both legs, each at least 0.02 box sizes)
                if self.seen[13:17].all():
                    shin = max(float(q[15, 1] - q[13, 1] + q[16, 1] - q[14, 1]) / 2, 0.02)
                    self.torso = torso / shin
            else:
                self.torso = torso
        arms = []
        for shoulder, elbow, wrist in ((5, 7, 9), (6, 8, 10)):
            upper = max(float(q[wrist, 1] - q[shoulder, 1]), 0.02)
            arms.append(min(max(float(q[wrist, 1] - q[elbow, 1]) / upper, 0.0), 5.0))
        self.arm_height = (arms[0] + arms[1]) / 2 if self.seen[5:11].all() else float("nan")
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
        result = self._process(t, pose, action)
        if self.c.leg_union > 0:
            extra = self.leg_union_step(t, action)
            result = result or extra
        return result

    def leg_union_step(self, t, action):
        c = self.c
        if action not in ("squats", "lunges") or not self.times or self.times[-1] != t or len(self.cues) < c.warmup:
            return None
        L = -np.asarray(self.cues, np.float64)
        if np.isnan(L).any():
            return None
        lo, hi = float(L.min()), float(L.max())
        r = hi - lo
        if r < c.leg_union:
            return None
        m = c.hysteresis * r
        cur = float(L[-1])
        new = self.u_side
        if cur >= hi - m:
            new = 1
        elif cur <= lo + m:
            new = -1
        if self.u_side == 0:
            self.u_side = new
            if self.u_rest == 0:
                self.u_rest = new
            return None
        if new == self.u_side or t - self.u_change < c.min_half_s:
            return None
        self.u_side = new
        self.u_change = t
        if new == self.u_rest:
            self.u_pc1 = False
            self.u_counted = False
            return None
        if self.u_pc1:
            return None
        self.u_counted = True
        self.u_bypass = True
        ev = self.count(action, t, 1)
        self.u_bypass = False
        return ev

    def _process(self, t, pose, action):
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
            self.other_since = None
            credited = self.credit_unnamed(action, t)
            self.last_action = action
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
        if c.cut_size > 0:
            h = self.cut_hist
            h.append(x)
            if len(h) > 4:
                h.pop(0)
            if len(h) == 4:
                v1 = float(np.linalg.norm(h[1] - h[0]))
                v2 = float(np.linalg.norm(h[2] - h[1]))
                v3 = float(np.linalg.norm(h[3] - h[2]))
                if v2 >= c.cut_size and v2 >= c.cut_ratio * max(v1, v3):
                    # the frame before the cut was h[1]; h[2], h[3] are after: keep those two
                    self.restart_window()
                    self.cut_hist = [h[2], h[3]]
                    self.cuts += 1
        self.rows.append(x)
        self.held_rows.append(self.held_pose.copy())
        self.cues.append(self.leg_height)
        self.torsos.append(self.torso)
        self.wks.append(self.wrist_knee)
        self.arm_cues.append(self.arm_height)
        self.current = x
        self.times.append(t)
        if len(self.rows) > c.window:
            self.rows.pop(0)
            self.held_rows.pop(0)
            self.cues.pop(0)
            self.torsos.pop(0)
            self.wks.pop(0)
            self.arm_cues.pop(0)
            self.times.pop(0)
        if len(self.rows) < c.warmup:
            return credited
        D = np.asarray(self.rows, np.float64)
        D = D - D.mean(axis=0)
        A = D
        if c.axis_from in ("velocity", "mix"):
            R = np.asarray(self.rows, np.float64)
            V = R[c.velocity_lag:] - R[:-c.velocity_lag] if len(R) > c.velocity_lag else R[:0]
            V = V - V.mean(axis=0) if len(V) else V
            A = V * np.sqrt(len(D) / max(len(V), 1)) * c.mix_weight
            if c.axis_from == "mix":
                A = np.vstack([D, A])
        iterations = 2
        if self.axis is None:
            self.axis = np.zeros(D.shape[1])
            self.axis[int(np.argmax((A * A).sum(axis=0)))] = 1
            iterations = 8
        for _ in range(iterations):
            w = A.T @ (A @ self.axis)
            norm = np.linalg.norm(w)
            if norm ** 2 <= 1e-18:
                break
            self.axis = w / norm
        s = D @ self.axis
        if c.detrend_s > 0:
            # variant: minus its trailing mean over detrend_s (a causal high-pass)
            w = max(1, int(round(c.detrend_s * c.fps)))
            cs0 = np.concatenate([[0.0], np.cumsum(s)])
            ii = np.arange(len(s))
            jj = np.maximum(0, ii - w + 1)
            s = s - (cs0[ii + 1] - cs0[jj]) / (ii + 1 - jj)
        leg_signal = c.leg_signal > 0 and action in c.leg_signal_actions
        if leg_signal:
            s = -np.asarray(self.cues, np.float64)
        k = c.smoothing
        cs = np.concatenate([[0.0], np.cumsum(s)])
        i = np.arange(len(s))
        j = np.maximum(0, i - k + 1)
        sm = (cs[i + 1] - cs[j]) / (i + 1 - j)
        env = sm[-int(round(c.envelope_s * c.fps)):] if c.envelope_s > 0 else sm
        if c.adaptive_envelope > 0:
            iv = np.diff(self.cand_times[-4:])
            iv = iv[iv < c.window_s]
            if len(iv) >= 2:
                span = max(c.adaptive_min_s, c.adaptive_envelope * float(np.median(iv)))
                env = sm[-max(2, int(round(span * c.fps))):]
        if c.envelope_pct > 0:
            lo, hi = np.percentile(env, [c.envelope_pct, 100 - c.envelope_pct])
        else:
            lo, hi = env.min(), env.max()
        cur = sm[-1]
        if c.opening_s > 0:
            kk = max(2, int(round(c.opening_s * c.fps)))
            if len(env) > kk:
                from numpy.lib.stride_tricks import sliding_window_view as swv
                v = swv(env, kk)
                hi, lo = float(v.min(axis=1).max()), float(v.max(axis=1).min())
        if c.decay_s > 0:
            med = float(np.median(env))
            age = (len(env) - 1 - np.arange(len(env))) / c.fps
            w = np.exp(-age / c.decay_s)
            hi = med + float(np.max(w * (env - med)))
            lo = med - float(np.max(w * (med - env)))
        if c.std_range > 0:
            rs = c.std_range * float(np.std(env))
            if rs < hi - lo:
                centre = float(np.mean(env))
                lo, hi = centre - rs / 2, centre + rs / 2
        if c.cycle_range > 0:
            t0 = self.times[0]
            self.cycles = [(a, b) for a, b in self.cycles if a >= t0]
            if len(self.cycles) >= c.cycle_range:
                tt = np.asarray(self.times)
                highs, lows = [], []
                for a, b in self.cycles[-c.cycle_range:]:
                    seg = sm[(tt >= a - 1e-9) & (tt <= b + 1e-9)]
                    highs.append(seg.max()); lows.append(seg.min())
                if c.cycle_stat == "extreme":
                    h2, l2 = float(max(highs)), float(min(lows))
                else:
                    h2, l2 = float(np.median(highs)), float(np.median(lows))
                mid, half = (h2 + l2) / 2, (h2 - l2) / 2 * c.cycle_margin
                h2, l2 = mid + half, mid - half
                if h2 - l2 < hi - lo and (not c.cycle_keep_min or h2 - l2 >= c.min_range):
                    hi, lo = min(hi, h2), max(lo, l2)
        if c.stuck_s > 0 and self.side != 0 and t - max(self.last_change, self.settle_t) > c.stuck_s:
            recent = sm[-max(2, int(round(c.stuck_s * c.fps))):]
            lo2, hi2 = float(recent.min()), float(recent.max())
            if hi2 - lo2 >= max(c.min_range, c.stuck_min * (hi - lo)) and (c.stuck_ac <= 0 or self.periodic(sm, c.stuck_ac_s) >= c.stuck_ac):
                lo, hi = lo2, hi2
        r = hi - lo
        m = c.hysteresis * r
        self.trace.append((t, cur, lo + m, hi - m))
        # the signal has kept still for still_s (moved less than still_share of the range)
        ns = max(2, int(round(c.still_s * c.fps)))
        self.still = c.still_s > 0 and len(sm) >= ns and float(np.ptp(sm[-ns:])) < c.still_share * r
        if c.gate > 0:
            self.credit(t, s, action)
        if r < (c.leg_signal if leg_signal else c.min_range):
            return credited
        if not self.replayed:
            self.replayed = True  # the first decision since the (re)start
            if not c.replay_warmup:
                return self.step(cur, t, lo, hi, m, t, action) or credited
            still, self.still = self.still, False
            for value, when in zip(sm[:-1], self.times[:-1]):
                if t - when > (c.warmup_s if c.replay_s is None else c.replay_s):
                    continue  # older than the event latency allows
                self.step(value, when, lo, hi, m, t, action if c.replay_counts else "other")
            self.still = still
        return self.step(cur, t, lo, hi, m, t, action) or credited

    def step(self, cur, t, lo, hi, m, now, action):
        c = self.c
        tpl = c.template_lo > 0 or c.template_hi > 0
        before = self.side
        result = self.side_step(cur, t, lo, hi, m, now, action)
        if tpl and self.rest != 0:
            returned = self.side == self.rest and before != self.rest and before != 0
            exiting = self.side != self.rest and ((self.rest == -1 and cur < hi - m) or (self.rest == 1 and cur > lo + m))
            if self.side == self.rest and not returned:
                self.rest_extreme = cur if self.rest_extreme is None else (max(self.rest_extreme, cur) if self.rest == 1 else min(self.rest_extreme, cur))
            elif self.side != self.rest and self.exc is not None and not exiting:
                self.exc["far"] = min(self.exc["far"], cur) if self.rest == 1 else max(self.exc["far"], cur)
            if returned:
                self.rest_extreme = cur
            if self.exc is not None and (returned or (c.template_at == "exit" and exiting)):
                # the excursion's far extreme is known
                exc = self.exc
                self.exc = None
                amp = (exc["rest"] - exc["far"]) * self.rest
                self.amps = [(tt, a) for tt, a in self.amps if t - tt <= c.template_memory_s]
                if exc["judge"] is not None:
                    med = float(np.median([a for _, a in self.amps])) if self.amps else amp
                    ok = (c.template_lo <= 0 or amp >= c.template_lo * med) and (c.template_hi <= 0 or amp <= c.template_hi * med)
                    if ok and exc["judge"] in COUNTABLE:
                        result = self.count(exc["judge"], now, 1) or result
                        self.amps.append((t, amp))
                elif exc["counted"]:
                    self.amps.append((t, amp))
        if result is None and self.leg_pending and self.side != 0 and self.side != self.rest:
            # A squat or lunge that reached the far side before its legs had folded enough: it
            # counts on the frame they do, as long as the signal has not gone back to rest.
            waiting = self.leg_slot >= 0
            if (not waiting and action not in ("squats", "lunges")) or (self.c.leg_defer_s > 0 and t - self.leg_pending_t > self.c.leg_defer_s):
                self.leg_pending = False
            elif self.leg_cue_moved(t):
                self.leg_pending = False
                if waiting:
                    self.unnamed[self.leg_slot][1] = True  # its legs folded: a squat or lunge once named
                    return result
                if not self.upright(t):
                    return result
                if c.count_at != "far":
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
            leaving = self.side != self.rest and ((self.rest == -1 and cur < hi - m) or (self.rest == 1 and cur > lo + m))
            held_still = self.side != self.rest and self.still
            if back or (c.count_at == "exit" and leaving) or held_still:
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
        if c.rule == "both" and self.side != 0:
            # the window rule, or a move of zigzag·range away from the extreme since the last change
            self.extreme = max(self.extreme, cur) if self.side == 1 else min(self.extreme, cur)
            mz = c.zigzag * (hi - lo)
            if cur >= hi - m or (self.side == -1 and cur >= self.extreme + mz):
                new = 1
            elif cur <= lo + m or (self.side == 1 and cur <= self.extreme - mz):
                new = -1
        elif c.rule in ("window", "both"):
            if cur >= hi - m:
                new = 1
            elif cur <= lo + m:
                new = -1
            self.extreme = cur
        else:
            if self.side == 0:
                # settle on the side of the window's middle the signal is on, once clearly off it
                if cur >= hi - m:
                    new = 1
                elif cur <= lo + m:
                    new = -1
                self.extreme = cur
            elif self.side == 1:
                self.extreme = max(self.extreme, cur)
                if cur <= self.extreme - m:
                    new = -1
            else:
                self.extreme = min(self.extreme, cur)
                if cur >= self.extreme + m:
                    new = 1
        if (self.rest == 1 and cur >= hi - m) or (self.rest == -1 and cur <= lo + m):
            self.last_rest_t = t
        if self.side == 0:
            if new != 0:
                self.last_rest_t = t
                self.settle_t = t
                self.side = new
                if self.rest == 0:
                    self.rest = new
            return None
        if new == self.side or t - self.last_change < c.min_half_s:
            return None
        self.side = new
        self.last_change = t
        self.extreme = cur
        if new == self.rest:
            if c.cycle_range > 0 and self.cycle_start is not None:
                self.cycles.append((self.cycle_start, t))
            self.cycle_start = None
            self.last_rest_t = t
            self.leg_pending = False
            return None
        self.last_rep_t = t
        if action not in COUNTABLE:
            if c.credit_unnamed:
                self.add_unnamed(t)
                if c.count_at != "far":
                    self.unnamed_await = len(self.unnamed) - 1
            return None
        self.candidates.append((now, t, self.last_rest_t))
        self.cand_times.append(t)
        self.cycle_start = self.last_rest_t
        if (c.template_lo > 0 or c.template_hi > 0):
            rest_level = self.rest_extreme if self.rest_extreme is not None else cur
            self.exc = {"rest": rest_level, "far": cur, "counted": False, "judge": None}
            recent = [a for tt, a in self.amps if t - tt <= c.template_memory_s]
            if len(recent) >= c.template_n and not (c.leg_cue > 0 and action in ("squats", "lunges")):
                self.exc["judge"] = action
                return None
        if c.arm_cue > 0 and action == "push_ups" and not self.leg_cue_moved(t, self.arm_cues, c.arm_cue):
            return None
        if action in ("squats", "lunges") and not self.upright(t):
            return None
        if action == "push_ups" and c.pushup_wrists is not None:
            i_end = max(i for i, tt in enumerate(self.times) if tt <= t + 1e-9)
            v = self.wks[i_end]
            if not np.isnan(v) and v < -c.pushup_wrists:
                return None
        if c.leg_cue > 0 and action in ("squats", "lunges") and not self.leg_cue_moved(t):
            self.leg_pending = c.leg_defer
            self.leg_pending_t = t
            self.leg_slot = -1
            return None
        if c.max_excursion_s > 0 and t - self.last_rest_t > c.max_excursion_s:
            return None
        if c.interval_ratio > 0:
            reject = False
            if self.last_candidate_t is not None:
                interval = t - self.last_candidate_t
                if self.intervals and interval > c.interval_reset * np.median(self.intervals[-c.interval_memory:]):
                    self.intervals = []
                reject = bool(self.intervals) and interval < c.interval_ratio * np.median(self.intervals[-c.interval_memory:])
                self.intervals.append(interval)
            self.last_candidate_t = t
            if reject:
                return None
        if c.gate > 0:
            self.pending.append(t)
            return None
        if c.similar > 0:
            x = self.current
            scale = c.similar * (hi - lo)
            recent = [(tt, xx) for tt, xx in self.crossings if now - tt <= c.memory_s]
            match = any(np.linalg.norm(x - xx) <= scale for tt, xx in recent)
            self.crossings = recent + [(now, x)]
            if not match:
                self.pending_similar = [now]
                return None
            n_new = 1 + len(self.pending_similar)
            self.pending_similar = []
            for _ in range(n_new):
                self.counts[action] += 1
                self.session += 1
                self.events.append((now, action, self.counts[action]))
            return self.events[-1]
        if c.count_at != "far":
            self.deferred = action
            return None
        return self.count(action, now, 1, at=t)

    def periodic(self, sm, span_s):
        """The last span_s seconds' autocorrelation peak over 0.4–2 s lags (0 if too short)."""
        x = sm[-max(4, int(round(span_s * self.c.fps))):]
        lmin, lmax = int(round(0.4 * self.c.fps)), min(int(round(2.0 * self.c.fps)), len(x) - 4)
        return autocorrelation_peak(x, lmin, lmax) if lmax >= lmin else 0.0

    def upright(self, t):
        """The shoulders above the hips (torso_min) on the frame at t (or since the last rest frame)."""
        c = self.c
        if c.torso_min is None:
            return True
        idx = [i for i, tt in enumerate(self.times) if tt <= t + 1e-9]
        if not idx:
            return True
        i_end = idx[-1]
        if c.torso_span == "frame":
            vals = [self.torsos[i_end]]
        else:
            starts = [i for i, tt in enumerate(self.times) if tt <= self.last_rest_t + 1e-9]
            vals = self.torsos[(starts[-1] if starts else 0):i_end + 1]
        vals = [v for v in vals if not np.isnan(v)]
        return not vals or min(vals) >= c.torso_min

    def leg_cue_moved(self, t, cues=None, threshold=None):
        c = self.c
        cues = self.cues if cues is None else cues
        threshold = c.leg_cue if threshold is None else threshold
        times = self.times
        i_end = max(i for i, tt in enumerate(times) if tt <= t + 1e-9)
        starts = [i for i, tt in enumerate(times) if tt <= self.last_rest_t + 1e-9]
        i_rest = starts[-1] if starts else 0
        if c.leg_cue_rest == "median":
            lo = max(0, i_rest - int(round(0.5 * c.fps)))
            rest = float(np.median(cues[lo:i_rest + 1]))
        else:
            rest = cues[i_rest]
        span = cues[max(0, i_rest - int(round(0.5 * c.fps))):i_end + 1]
        if any(np.isnan(v) for v in span):
            return True  # the legs were not all seen yet: no cue, the generic path counts
        moved = max(abs(v - rest) for v in cues[i_rest:i_end + 1])
        return moved >= threshold

    def add_unnamed(self, t):
        """Keeps a repetition seen while no exercise is named, with whether it passed the squat/lunge
        cues already (if its legs fold a little later, the leg-pending check marks it)."""
        if len(self.unnamed) == MAX_UNNAMED:
            self.drop_oldest_unnamed(1)
        upright = self.c.torso_min is None or self.upright(t)
        folded = self.c.leg_cue <= 0 or self.leg_cue_moved(t)
        self.unnamed.append([t, upright and folded])
        if upright and not folded:
            self.leg_pending = self.c.leg_defer
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
        if self.exc is not None and self.exc["judge"] is None:
            self.exc["counted"] = True
        if self.c.leg_union > 0 and action in ("squats", "lunges") and not self.u_bypass:
            if self.u_counted:
                return None
            self.u_pc1 = True
        for _ in range(n):
            self.counts[action] += 1
            self.session += 1
            self.events.append((now, action, self.counts[action]))
            self.event_at.append(now if at is None else at)
        return self.events[-1]

    def credit(self, t, s, action):
        c = self.c
        self.pending = [p for p in self.pending if t - p <= c.window_s]
        if not self.pending or action not in COUNTABLE:
            return
        n = len(s)
        lmin = int(round(c.min_period_s * c.fps))
        lmax = min(int(round(c.max_period_s * c.fps)), n - lmin)
        if lmax < lmin:
            return
        if autocorrelation_peak(s, lmin, lmax) >= c.gate:
            for p in self.pending:
                self.counts[action] += 1
                self.session += 1
                self.events.append((t, action, self.counts[action]))
            self.pending = []


def autocorrelation_peak(s, lmin, lmax):
    """The highest autocorrelation of s (its mean removed) over lags lmin..lmax frames, each lag's
    mean product divided by the variance: 1 for a signal that repeats itself exactly."""
    x = s - s.mean()
    n = len(x)
    e0 = np.dot(x, x) / n + 1e-12
    return max(np.dot(x[:-l], x[l:]) / (n - l) for l in range(lmin, lmax + 1)) / e0


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
