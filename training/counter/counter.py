"""Reference implementation of the chosen counter, step for step as Sources/Actions/Repetitions.

Three parts, as the Swift types: the motion rule (counter_rule.MotionRule: features → one signal
→ sides → repetitions), the phase net's path (learned/count.PhaseNetPath, beside PhaseCounter) and
the set bookkeeping both feed (counter_ledger.Ledger: counts, kept repetitions, credit, set end).
`RepetitionCounter` runs them per frame as RepetitionCounter.swift does; see the Swift files for
the why.

`Config` holds the Swift parameters (RepetitionCounterConfiguration, paired by name in the README's
parameter list) and `credit_unnamed`, a switch for evaluate.py's replay comparison. The variants
measured in the research rounds and not adopted are in git history, not here (README.md, History).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from counter_ledger import COUNTABLE, MAX_UNNAMED, Ledger  # noqa: F401 (COUNTABLE, MAX_UNNAMED: this module's API)
from counter_rule import BODY, BONES, NOSE, PAIRS, MotionRule, bone_ratio, usable  # noqa: F401


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
    """Counts repetitions of the current action, online, with cumulative counts per action and per
    session: `process` per frame; `counts`, `session`, `events` and `event_at` (the ledger's)."""

    def __init__(self, config: Config | None = None):
        self.c = config or Config()
        self.ledger = Ledger(self.c)
        self.rule = MotionRule(self.c, self.ledger)
        self.phase = None  # use_phase_net sets the net's path

    counts = property(lambda self: self.ledger.counts)
    session = property(lambda self: self.ledger.session)
    events = property(lambda self: self.ledger.events)
    event_at = property(lambda self: self.ledger.event_at)

    def use_phase_net(self, poses, outputs=None):
        """Counts `phase_labels` with the phase net: its outputs for the frames to come (`outputs`, or
        the installed models' for `poses`, learned/phase_net.py), one per process() call."""
        from learned.count import PhaseNetPath
        if outputs is None:
            from learned import phase_net
            outputs = phase_net.outputs(poses)
        self.phase = PhaseNetPath(outputs, self.c.fps)

    def process(self, t, pose, action):
        """One frame: its time, the pose (None: no person) and the label (an exercise, "other" or
        None). Returns the events counted on it."""
        c = self.c
        ledger, rule = self.ledger, self.rule
        first = len(ledger.events)
        if t - rule.last_pose_t > c.gap_reset_s:
            rule.reset_motion()
        ledger.end_paused_sets(t)
        if action in COUNTABLE:
            start = t - c.new_set_window_s
            if ledger.names_new_set(action, t) and rule.holds_frames_before(start):
                rule.start_new_set(start)
                ledger.drop_from(start)
            rule.adopt(ledger.credit(action, t), action)
        elif action == "other":
            ledger.label_is_other(t)
        if self.phase is not None:
            self.phase.process(t, action, ledger)  # every frame, with or without a pose
        rule.process(t, pose, action)
        return ledger.events[first:]


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
