"""Checks of the counter's three parts (counter.py, counter_rule.py, counter_ledger.py and
learned/count.py's PhaseNetPath), each on its own with made-up input.

    python -m unittest discover -s training/counter -p "test_counter.py"

Needs only numpy; runs in a few seconds.
"""
from __future__ import annotations

import math
import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import counter  # noqa: E402
from counter_ledger import MAX_UNNAMED, Ledger  # noqa: E402
from counter_rule import MotionRule  # noqa: E402
from learned.count import PhaseNetPath  # noqa: E402

FPS = 15.0


def squat_pose(depth, rng):
    """A standing person (pixels, y down) whose hips and upper body drop by `depth` (0..1) of a
    squat, with a detector's jitter (a perfectly still start would give the axis a feature that
    never varies)."""
    pose = np.zeros((17, 3), np.float32)
    drop = 60 * depth
    for joint, x, y in [(0, 320, 100 + drop), (5, 350, 140 + drop), (6, 290, 140 + drop), (7, 355, 190 + drop),
                        (8, 285, 190 + drop), (9, 358, 230 + drop), (10, 282, 230 + drop), (11, 340, 250 + drop),
                        (12, 300, 250 + drop), (13, 345 + 20 * depth, 330 + 15 * depth),
                        (14, 295 + 20 * depth, 330 + 15 * depth), (15, 340, 400), (16, 300, 400)]:
        pose[joint] = (x + rng.uniform(-1.5, 1.5), y + rng.uniform(-1.5, 1.5), 0.9)
    return pose


def squats(rule, ledger, label, repetitions=6, rate=0.5):
    """2 s standing, `repetitions` squats, 3 s standing; returns the time each squat ended."""
    rng = np.random.default_rng(1)
    for index in range(int((2 + repetitions / rate + 3) * FPS)):
        t = index / FPS
        phase = max(0.0, t - 2) * rate
        depth = 0.0 if phase >= repetitions else (1 - math.cos(2 * math.pi * phase)) / 2
        rule.process(t, squat_pose(depth, rng), label)
    return [2 + n / rate for n in range(1, repetitions + 1)]


class MotionRuleTests(unittest.TestCase):
    def setUp(self):
        self.config = counter.Config(phase_labels=())
        self.ledger = Ledger(self.config)
        self.rule = MotionRule(self.config, self.ledger)

    def test_each_move_to_the_far_side_and_back_is_one_repetition_counted_at_its_end(self):
        ends = squats(self.rule, self.ledger, "squats")
        self.assertEqual(self.ledger.counts["squats"], 6)
        for at, end in zip(self.ledger.event_at, ends):
            self.assertTrue(end - 1 < at <= end + 1, f"event at {at} for an end at {end}")

    def test_unnamed_repetitions_are_kept_and_credited_when_named(self):
        squats(self.rule, self.ledger, None)
        self.assertEqual(self.ledger.session, 0)
        self.assertEqual(len(self.ledger.unnamed), 6)
        self.rule.adopt(self.ledger.credit("squats", 20.0), "squats")
        self.assertEqual(self.ledger.counts["squats"], 6)
        self.assertEqual([now for now, _, _ in self.ledger.events], [20.0] * 6)

    def test_the_person_leaving_drops_what_was_kept(self):
        squats(self.rule, self.ledger, None, repetitions=3)
        self.assertEqual(len(self.ledger.unnamed), 3)
        self.rule.reset_motion()
        self.assertEqual(self.ledger.unnamed, [])


class LedgerTests(unittest.TestCase):
    def setUp(self):
        self.config = counter.Config(phase_labels=("squats",))
        self.ledger = Ledger(self.config)

    def keep(self, t, passes=True):
        self.ledger.end_paused_sets(t)
        self.ledger.last_rep_t = t
        self.ledger.keep(t, passes)

    def test_kept_repetitions_count_with_their_own_times_once_named(self):
        self.keep(1.0)
        self.keep(2.0, passes=False)
        self.assertEqual(self.ledger.credit("jumping_jacks", 3.0), (False, False))
        self.assertEqual(self.ledger.event_at, [1.0, 2.0])
        self.assertEqual(self.ledger.events, [(3.0, "jumping_jacks", 1), (3.0, "jumping_jacks", 2)])

    def test_squats_and_lunges_credit_only_the_kept_repetitions_that_passed_their_cues(self):
        self.keep(1.0)
        self.keep(2.0, passes=False)
        self.ledger.credit("lunges", 3.0)
        self.assertEqual(self.ledger.event_at, [1.0])

    def test_a_set_paused_too_long_or_other_past_the_label_lag_ends_uncounted(self):
        self.keep(1.0)
        self.ledger.end_paused_sets(1.0 + self.config.set_pause_s + 0.1)
        self.assertEqual(self.ledger.unnamed, [])
        self.keep(10.0)
        for t in np.arange(10.5, 10.5 + self.config.label_lag_s + 1, 0.5):
            self.ledger.label_is_other(float(t))
        self.assertEqual(self.ledger.unnamed, [])

    def test_the_net_counts_its_labels_and_the_rule_the_others(self):
        self.assertIsNone(self.ledger.count("squats", 1.0, 1), "the rule's squats: the net's label")
        self.ledger.net_repetition("squats", 1.0, 0.9)
        self.ledger.net_repetition("lunges", 2.0, 1.9)
        self.ledger.net_repetition(None, 3.0, 2.9)
        self.keep(3.0)
        self.ledger.credit("squats", 4.0)
        self.assertEqual(self.ledger.event_at, [0.9, 2.9])
        self.assertEqual(self.ledger.unnamed, [], "the rule's kept repetition goes under the net's label")

    def test_the_oldest_kept_repetition_goes_past_the_maximum(self):
        for index in range(MAX_UNNAMED + 1):
            self.keep(0.01 * index)
        self.assertEqual(len(self.ledger.unnamed), MAX_UNNAMED)
        self.assertEqual(self.ledger.unnamed[0][0], 0.01)


class PhaseNetPathTests(unittest.TestCase):
    def outputs(self, seconds=10, rate=0.5):
        """A net sure the person is repeating at `rate` per second from 1 s on."""
        t = np.arange(int(seconds * FPS)) / FPS
        angle = 2 * math.pi * rate * t
        return np.stack([np.cos(angle), np.sin(angle), (t >= 1).astype(float)], axis=1).astype(np.float32)

    def run_path(self, label):
        ledger = Ledger(counter.Config(phase_labels=("squats",)))
        path = PhaseNetPath(self.outputs(), FPS)
        for frame in range(len(path.outputs)):
            path.process(frame / FPS, label, ledger)
        return ledger

    def test_its_repetitions_count_under_its_labels_are_kept_unnamed_and_ignored_otherwise(self):
        counted = self.run_path("squats")
        self.assertGreaterEqual(counted.session, 4)
        kept = self.run_path(None)
        self.assertEqual(kept.session, 0)
        self.assertEqual(kept.phase_unnamed, counted.event_at)
        ignored = self.run_path("lunges")
        self.assertEqual((ignored.session, ignored.phase_unnamed), (0, []))


if __name__ == "__main__":
    unittest.main()
