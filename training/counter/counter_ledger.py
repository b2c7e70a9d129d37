"""The set bookkeeping both counting paths feed (Swift: RepetitionLedger.swift).

Takes each repetition the motion rule (counter_rule.MotionRule) or the phase net
(learned/count.PhaseNetPath) sees, with its time, and each frame's label. Gives the counts (`counts`,
`session`) and the events (`events`: (frame time, label, count); `event_at`: when each happened).
A repetition seen while no exercise is named is kept for the current set and credited, with its own
time, when one is; the set ends (what it kept is dropped) after set_pause_s without a repetition,
when the person leaves (`person_left`), or once "other" has held longer than label_lag_s. The net
counts its labels (`Config.phase_labels`); the rule's repetitions of those labels are not counted.
"""
from __future__ import annotations

import numpy as np

COUNTABLE = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups"]
# The most repetitions kept while no exercise is named (RepetitionCounter.maximumPendingRepetitions).
MAX_UNNAMED = 64
# The labels with the leg and upright-torso cues.
STANDING_LEG = ("squats", "lunges")


class Ledger:
    def __init__(self, config):
        self.c = config
        self.counts = {label: 0 for label in COUNTABLE}
        self.session = 0
        self.events = []  # (t, label, count): t = the frame it was counted on
        self.event_at = []  # per entry of events: the frame the repetition was seen on (its crossing)
        self.label_last = {}  # exercise label -> the last frame it was the label on
        self.last_phase_rep_t = -np.inf
        self.person_left()
        self.leg_slot = -1

    def person_left(self):
        """The person left (or the camera cut): whoever did the kept repetitions is gone."""
        self.unnamed = []  # [time, passes the squat/lunge cues] of repetitions seen while no exercise was named
        self.phase_unnamed = []  # the phase net's repetitions seen while no exercise was named (times)
        self.other_since = None
        self.last_rep_t = -np.inf
        # count_at_return: the index in unnamed of the repetition not ended yet (-1: none)
        self.unnamed_await = -1

    def window_restarted(self):
        """The rule's window restarted: the end of a kept repetition under way will not be seen in the
        old frame, and none waits for its legs (`leg_slot`: the kept repetition whose legs have not
        folded yet, -1: none)."""
        self.unnamed_await = -1
        self.leg_slot = -1

    def count(self, action, now, n, at=None, phase=False):
        if action in self.c.phase_labels and not phase:
            return None  # this label's repetitions come from the phase net
        for _ in range(n):
            self.counts[action] += 1
            self.session += 1
            self.events.append((now, action, self.counts[action]))
            self.event_at.append(now if at is None else at)
        return self.events[-1]

    def end_paused_sets(self, t):
        if self.unnamed and t - self.last_rep_t > self.c.set_pause_s:
            self.unnamed = []  # the set ended before anyone named it
            self.unnamed_await = -1
        if self.phase_unnamed and t - self.last_phase_rep_t > self.c.set_pause_s:
            self.phase_unnamed = []

    def names_new_set(self, action, t):
        """`action` is the label at t: whether it names a new set the rule counts (new_set_window_s)."""
        c = self.c
        named_before = self.label_last.get(action, -np.inf)
        self.label_last[action] = t
        last_counted = self.event_at[-1] if self.event_at else -np.inf
        return (c.new_set_window_s > 0 and action not in c.phase_labels and t - named_before > c.label_lag_s
                and last_counted < t - c.new_set_window_s)

    def drop_from(self, start):
        """A new set restarts the rule's window at start: the kept repetitions from then on go."""
        del self.unnamed[sum(1 for when, _ in self.unnamed if when < start):]  # oldest first

    def credit(self, action, now):
        """An exercise is named: the set's repetitions seen before (that pass its cues) count now.
        Returns what goes back to the rule: (the one under way now counts at its end, the one
        still folding its legs is now a squat or lunge waiting)."""
        self.other_since = None
        if action in self.c.phase_labels:
            for when in self.phase_unnamed:
                self.count(action, now, 1, at=when, phase=True)
            self.phase_unnamed = []
            self.unnamed = []
            self.unnamed_await = -1
            self.leg_slot = -1
            return False, False
        self.phase_unnamed = []
        if not self.unnamed:
            return False, False
        gated = action in STANDING_LEG
        waiting = self.leg_slot
        awaits = False
        in_progress, self.unnamed_await = self.unnamed_await, -1
        for i, (when, passes) in enumerate(self.unnamed):
            if not gated or (passes and i != waiting):
                if i == in_progress and i != waiting:
                    awaits = True  # not ended yet: counts at its end, as under the label
                else:
                    self.count(action, now, 1, at=when)
        folding = False
        if waiting >= 0:
            self.leg_slot = -1
            folding = gated  # still folding its legs: now a squat or lunge waiting to count
        self.unnamed = []
        return awaits, folding

    def label_is_other(self, t):
        since = self.other_since if self.other_since is not None else t
        self.other_since = since
        if t - since > self.c.label_lag_s:
            self.drop_unnamed(t - self.c.label_lag_s)
            self.phase_unnamed = [w for w in self.phase_unnamed if w >= t - self.c.label_lag_s]

    def net_repetition(self, action, t, at):
        """The phase net saw a repetition at `at` on the frame at t."""
        self.last_phase_rep_t = t
        if action in self.c.phase_labels:
            self.count(action, t, 1, at=at, phase=True)
        elif action not in COUNTABLE and self.c.credit_unnamed:
            if len(self.phase_unnamed) == MAX_UNNAMED:
                self.phase_unnamed.pop(0)
            self.phase_unnamed.append(at)

    def keep(self, t, passes, waits_for_legs=False, ended=False):
        """Keeps a rule repetition seen while no exercise is named; `ended`: kept at its end."""
        if len(self.unnamed) == MAX_UNNAMED:
            self.drop_oldest_unnamed(1)
        self.unnamed.append([t, passes])
        if ended:
            self.last_rep_t = t
        if waits_for_legs:
            self.leg_slot = len(self.unnamed) - 1

    def repetition_ended(self, t):
        """The rule's signal came back (or kept still on the far side) at t."""
        if self.unnamed_await >= 0:
            self.unnamed[self.unnamed_await][0] = t  # a repetition's time is its end
            self.last_rep_t = t
            self.unnamed_await = -1

    def legs_folded(self):
        self.unnamed[self.leg_slot][1] = True  # its legs folded: a squat or lunge once named
        self.leg_slot = -1

    def drop_unnamed(self, before):
        self.drop_oldest_unnamed(sum(1 for when, _ in self.unnamed if when < before))

    def drop_oldest_unnamed(self, n):
        if n <= 0:
            return
        del self.unnamed[:n]
        if self.unnamed_await >= 0:
            self.unnamed_await = max(-1, self.unnamed_await - n)
        if self.leg_slot >= 0:
            self.leg_slot = max(-1, self.leg_slot - n)
