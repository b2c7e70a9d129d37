"""Checks of the generated-session benchmark (sessions.py) and its scoring (evaluate.py sessions).

    python -m unittest discover -s training/counter -p "test_sessions.py"

Needs only numpy; runs in a few seconds.
"""
from __future__ import annotations

import os
import sys
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import evaluate  # noqa: E402
import scoring  # noqa: E402
import sessions  # noqa: E402
from posegen import detector  # noqa: E402  (sessions put training/ on the path)
from posegen.body import random_body  # noqa: E402


class SessionTests(unittest.TestCase):
    def test_a_seed_gives_the_same_session_and_another_seed_another(self):
        a, ann_a = sessions.make_session(2323000)
        b, ann_b = sessions.make_session(2323000)
        c, _ = sessions.make_session(2323001)
        self.assertTrue(np.array_equal(a, b))
        self.assertEqual(ann_a, ann_b)
        self.assertFalse(a.shape == c.shape and np.array_equal(a, c))

    def test_clean_poses_are_the_same_session_without_the_detector_noise(self):
        noisy, ann = sessions.make_session(2323001)
        clean, ann_clean = sessions.make_session(2323001, clean_poses=True)
        self.assertEqual([(s["label"], s["reps"]) for s in ann["sets"]], [(s["label"], s["reps"]) for s in ann_clean["sets"]])
        self.assertEqual(noisy.shape, clean.shape)
        person, noisy_person = clean[..., 2].max(1) > 0, noisy[..., 2].max(1) > 0
        self.assertGreaterEqual(person.sum(), noisy_person.sum())  # no dropped frames
        # every joint of a person in view scores 0.9 (only joints past the frame edge while
        # walking in or out lose score); the detector's scores are spread
        self.assertGreater(np.mean(clean[person][..., 2] == np.float32(0.9)), 0.95)
        self.assertLess(np.mean(noisy[noisy_person][..., 2] == np.float32(0.9)), 0.05)
        both = person & noisy_person
        self.assertGreater(np.abs(clean[both][..., :2] - noisy[both][..., :2]).mean(), 0.5)  # the noise moved the joints

    def test_the_calibrated_detector_scores_in_movenets_levels_and_harsh_is_another_draw(self):
        calibrated, ann = sessions.make_session(2323002)
        harsh, ann_harsh = sessions.make_session(2323002, noise="harsh")
        # the same sets; only the detector differs
        self.assertEqual([(s["label"], s["reps"]) for s in ann["sets"]], [(s["label"], s["reps"]) for s in ann_harsh["sets"]])
        sets = np.concatenate([calibrated[int(s["reps"][0][0] * 15) + 1:int(s["reps"][-1][1] * 15)] for s in ann["sets"]])
        scores = sets[..., 2][sets[..., 2] > 0].astype(np.float64)  # (walking in or out scales the scores)
        logits = np.log(scores / (1 - scores)) / detector.LOGIT_STEP
        self.assertLess(np.abs(logits - np.round(logits)).max(), 1e-3)  # int8 MoveNet's score levels
        harsh_scores = harsh[..., 2][harsh[..., 2] > 0].astype(np.float64)
        harsh_logits = np.log(harsh_scores / (1 - harsh_scores)) / detector.LOGIT_STEP
        self.assertGreater(np.abs(harsh_logits - np.round(harsh_logits)).mean(), 0.1)  # continuous scores
        # most of a person's body joints score at least the counter's 0.3, not all of them
        seen = calibrated[..., 2].max(1) > 0
        share = np.mean(calibrated[seen][:, 5:, 2] >= 0.3)
        self.assertTrue(0.8 < share < 0.99, share)

    def test_detector_parameters_change_the_draw(self):
        rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
        kp = np.tile(np.linspace(100, 300, 17)[None, :, None], (60, 1, 2))
        depth = np.full((60, 17), 3.0)
        a = detector.detector_noise(kp, depth, (640, 480), rng_a)
        b = detector.detector_noise(kp, depth, (640, 480), rng_b, dict(jitter=0.0, jitter_low=1.0, stray_rate=0.0,
                                                                    swap_rate=0.0, lost_rate=0.0))
        self.assertEqual(a.shape, (60, 17, 3))
        self.assertTrue(np.allclose(b[..., :2], kp))  # no position error at all
        self.assertFalse(np.allclose(a[..., :2], kp))

    def test_sets_have_the_asked_repetitions_and_tempo(self):
        for seed in (2323000, 2323001, 2323002):
            keypoints, ann = sessions.make_session(seed)
            self.assertEqual(keypoints.shape, (ann["frames"], 17, 3))
            self.assertGreaterEqual(len(ann["sets"]), 2)
            previous_end = 0.0
            for s in ann["sets"]:
                self.assertIn(s["label"], sessions.EXERCISES)
                reps = np.asarray(s["reps"])
                self.assertTrue(3 <= len(reps) <= 20)
                lo, hi = sessions.REP_SECONDS[s["label"]]
                durations = reps[:, 1] - reps[:, 0]
                self.assertTrue(np.all(durations >= max(lo, 0.6) - 1e-9) and np.all(durations <= min(hi, 3.0) + 1e-9))
                self.assertTrue(np.all(reps[1:, 0] >= reps[:-1, 1] - 1e-9))  # in order, not overlapping
                self.assertGreater(reps[0, 0], previous_end)
                self.assertTrue(all(a <= f <= b for (a, b), f in zip(reps, s["far"])))
                previous_end = reps[-1, 1]
            self.assertLess(previous_end, ann["seconds"])

    def test_each_repetition_starts_and_ends_at_the_rest_pose(self):
        # The times are exact only if the warped motion is at rest at every bound and far from it
        # in between. Each exercise's driving joint angle (generator parameters, degrees) at the
        # bounds is compared with its value in the hold before the first repetition.
        driving = {"squats": lambda p: p["Lknee"], "lunges": lambda p: np.maximum(p["Lknee"], p["Rknee"]),
                   "jumping_jacks": lambda p: p["Lsh_abd"], "push_ups": lambda p: p["Lelbow"],
                   "burpees": lambda p: p["Lhip_flex"]}
        rng = np.random.default_rng(99)
        for label in sessions.EXERCISES:
            for _ in range(3):
                params, reps = sessions.make_set(rng, random_body(rng), label)
                angle = driving[label](params)
                at = lambda t: angle[min(len(angle) - 1, int(round(t * sessions.FPS)))]  # noqa: E731
                rest = at(reps[0, 0] - 0.3)
                inside = angle[int(round(reps[0, 0] * sessions.FPS)):int(round(reps[-1, 1] * sessions.FPS))]
                reach = float(np.max(np.abs(inside - rest)))
                bounds = max(max(abs(at(a) - rest), abs(at(b) - rest)) for a, b in reps)
                far = min(abs(at(f) - rest) for f in (a + (b - a) / 2 for a, b in reps))
                self.assertGreater(reach, 20.0, label)  # a real movement
                self.assertLess(bounds, 0.2 * reach, label)
                if label != "burpees":  # the middle of a burpee may be its jump, back at the rest angle
                    self.assertGreater(far, 0.3 * reach, label)


class ScoringTests(unittest.TestCase):
    SET = {"label": "squats", "reps": [[10.0, 13.0], [13.0, 15.5], [16.0, 18.5]], "far": [11.0, 14.0, 17.0]}

    @staticmethod
    def rep(t, count, label="squats", **extra):
        return dict(t=t, event="rep", label=label, count=count, **extra)

    def test_an_event_at_each_end_counts_the_set_exactly(self):
        lines = [self.rep(13.2, 1), self.rep(15.6, 2), self.rep(18.6, 3)]
        result = evaluate.score_set(self.SET, evaluate.rep_events(lines), [], 1.0)
        self.assertEqual((result["count"], result["match"].matched, result["on_time"]), (3, 3, 3))

    def test_a_count_at_the_far_pose_of_a_slow_repetition_is_early(self):
        lines = [self.rep(11.0, 1), self.rep(15.6, 2), self.rep(18.6, 3)]
        result = evaluate.score_set(self.SET, evaluate.rep_events(lines), [], 1.0)
        self.assertEqual((result["match"].matched, result["unmatched"], result["early"]), (2, 1, 1))
        self.assertEqual(result["missed"], {"first": 1})

    def test_a_late_burst_is_on_time_when_it_follows_the_label(self):
        # The label settles at 15.2 s; the first two repetitions are credited at 15.5 s with their
        # own times (`at`), in one event whose count rises by two; the third on its own.
        lines = [self.rep(15.5, 2, at=[12.9, 15.3]), self.rep(18.6, 3)]
        runs = [(0.0, "other"), (15.2, "squats")]
        result = evaluate.score_set(self.SET, evaluate.rep_events(lines), runs, 1.0)
        self.assertEqual((result["count"], result["match"].matched, result["on_time"], result["late_settled"]), (3, 3, 3, 1))
        # The label settled at 13.0 s: crediting the first one at 15.5 s is late.
        runs = [(0.0, "other"), (13.0, "squats")]
        result = evaluate.score_set(self.SET, evaluate.rep_events(lines), runs, 1.0)
        self.assertEqual((result["match"].matched, result["on_time"], result["late_settled"]), (3, 2, 0))
        # Without `at`, a count rising by two stands for two repetitions at the credited time.
        labelled = evaluate.rep_events([self.rep(15.5, 2)])
        self.assertEqual([e.at for _, e in labelled], [15.5, 15.5])

    def test_other_labels_and_events_outside_sets_are_not_the_sets(self):
        lines = [self.rep(12.2, 1, label="lunges"), self.rep(30.0, 1)]
        labelled = evaluate.rep_events(lines)
        result = evaluate.score_set(self.SET, labelled, [], 1.0)
        self.assertEqual((result["count"], result["wrong"]), (0, 1))
        ann = {"sets": [self.SET], "segments": [{"kind": "rest", "start": 0.0, "end": 9.0},
                                                 {"kind": "set", "start": 9.0, "end": 18.0},
                                                 {"kind": "walk", "start": 18.0, "end": 40.0}]}
        self.assertEqual(evaluate.outside_events(ann, labelled, 1.0), {"walk (squats)": 1})

    def test_pairs_agree_with_scoring(self):
        rng = np.random.default_rng(5)
        for _ in range(200):
            ends = np.sort(rng.uniform(0, 30, rng.integers(1, 12)))
            reps = [(e - 1.0, e) for e in ends]
            events = [scoring.Event(at=a, credited=a) for a in rng.uniform(0, 31, rng.integers(0, 14))]
            self.assertEqual(len(evaluate.matched_pairs(events, reps, 1.0)), scoring.match(events, reps, 1.0).matched)


if __name__ == "__main__":
    unittest.main()
