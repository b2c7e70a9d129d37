#!/usr/bin/env python3
"""Fixture holding KeypointSmoother.swift to the Python port jitter.py measures with.

A seeded synthetic track at 15 fps (no dev data): a still pose with keypoint noise, one wrist
swinging fast, a knee dropping below the score threshold for a few frames, and a 1.5 s gap (the
filters restart). Written to Fixtures/smoother_fixture.npy, float32[frames, 2, 17, 3]: [:, 0] the
input (x, y, score), [:, 1] the port's output with the default settings; frame t is at t/15 s
except after the gap (see GAP).

  /work/venv/bin/python Tests/PoseEstimationTests/Scripts/smoother_fixture.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import posewatch_pose as pp  # noqa: E402

FRAMES = 90
GAP = 60  # frames from this index on are 1.5 s later
FPS = 15


def main():
    rng = np.random.default_rng(6)
    base = np.array([(0, -170), (-8, -178), (8, -178), (-16, -172), (16, -172), (-40, -120), (40, -120),
                     (-50, -60), (50, -60), (-55, 0), (55, 0), (-25, 0), (25, 0), (-25, 70), (25, 70),
                     (-25, 140), (25, 140)], dtype=np.float64) + (320, 260)
    inputs = np.zeros((FRAMES, 17, 3), dtype=np.float32)
    for t in range(FRAMES):
        pose = base + rng.normal(0, 2.0, base.shape)
        angle = 2 * math.pi * 1.2 * t / FPS
        pose[9] += (120 * math.sin(angle), -90 * (1 - math.cos(angle)))  # left wrist swings
        scores = np.full(17, 0.8)
        if 30 <= t < 34:
            scores[13] = 0.1  # left knee lost for four frames
        inputs[t, :, :2] = pose
        inputs[t, :, 2] = scores
    smoother = pp.OneEuro()
    outputs = np.stack([smoother.smooth(inputs[t].astype(np.float64), time(t)) for t in range(FRAMES)]).astype(np.float32)
    path = os.path.join(os.path.dirname(__file__), "..", "Fixtures", "smoother_fixture.npy")
    np.save(path, np.stack([inputs, outputs], axis=1))


def time(t):
    return t / FPS + (1.5 if t >= GAP else 0.0)


if __name__ == "__main__":
    main()
