"""A detector model fitted to what posewatch's pose stage (MoveNet Lightning int8) gives on real clips.

The generated sessions see their joints through this model (`sessions.py --noise calibrated`, the
default). `posegen.camera.movenet_noise`, the classifier's training noise, stays as the stress
setting (`--noise harsh`). The parameters were fitted by `training/posegen/calibration.py fit` on
the fit half of the real clips (split by source) and checked on the other half; the figures are in
docs/accuracy.md ("detector model").

What it models, every part from a measured statistic (calibration.py's docstring lists them):

* **Scores** live in logit space: a base per joint group (face, shoulders, elbows, wrists, hips,
  knees, ankles), lower for a person small in the frame, a per-session and a per-joint offset, a
  frame-to-frame part with little memory (MoveNet's scores are close to white from one frame to
  the next: lag-1 autocorrelation about 0.2 on real clips), a drop for the joint of a pair that
  is clearly further from the camera, and short misses (a frame or two where a joint scores far
  lower: the heavy low tail of real scores). The int8 model's scores come in steps of 0.28 in
  logit; so do these.
* **Position error** is an AR(1) process per joint (correlated frame to frame) whose size grows as
  the joint's score falls; a joint scoring low is now and then somewhere else entirely.
* **Left/right swaps** of a pair come in short bursts; **frames without a person** come from the
  scores through the presence rule, plus short bursts where MoveNet loses the person.
"""
from __future__ import annotations

import numpy as np

from .camera import PAIRS, _ar1, body_scale, swap_index  # shared with the harsh model

# Joint groups in COCO-17 order: face 0-4, shoulders, elbows, wrists, hips, knees, ankles.
GROUP_OF_JOINT = np.array([0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6])
LOGIT_STEP = 0.2804  # the spacing of MoveNet int8's score levels in logit (measured on its outputs)

# Fitted on the real clips' fit half (calibration.py fit); see the module docstring.
CALIBRATED = dict(
    base=[0.85, 1.25, 1.3, 0.6, 1.6, 1.15, 1.0],  # logit at a person half the frame high, per group
    size_slope=0.75,         # logit per unit of height share above 0.5 (small people score lower)
    session_sd=0.25,         # per-session offset (lighting, clothing, camera)
    joint_sd=0.15,           # per-joint offset within a session
    frame_sd=0.55,           # frame-to-frame part
    frame_rho=0.1,           # its lag-1 correlation
    occlusion=1.0,           # logit drop for the far joint of a pair (clearly further away)
    miss=[0.03, 0.0, 0.02, 0.03, 0.01, 0.07, 0.08],  # chance per frame that a joint of the group is missed
    miss_drop=3.0,           # by how much a missed joint's logit falls
    jitter=0.024,            # position error (body size / 3.5 units) at score 1
    jitter_low=2.5,          # how many times larger at score 0.3
    jitter_rho=0.6,          # the error's lag-1 correlation
    stray_rate=0.02,         # chance a joint scoring under 0.5 is somewhere else
    swap_rate=0.01,          # chance a burst of crossed left/right labels starts on a frame
    swap_frames=1.0,         # a burst's mean length
    lost_rate=0.002,         # chance a burst of frames where MoveNet loses the person starts
)


def _bursts(rng, T, rate, mean_length):
    """bool[T]: bursts starting with chance `rate` per frame, geometric lengths of the given mean."""
    mask = np.zeros(T, bool)
    starts = np.flatnonzero(rng.random(T) < rate)
    for start in starts:
        mask[start:start + rng.geometric(1.0 / max(mean_length, 1.0))] = True
    return mask


def _quantised(logit):
    return 1.0 / (1.0 + np.exp(-np.round(logit / LOGIT_STEP) * LOGIT_STEP))


def detector_noise(kp, depth, size, rng, params=None):
    """kp (T,17,2) clean pixels, depth (T,17) metres from the camera, size (W, H) -> (T,17,3)
    x, y, score as posewatch's pose stage gives them (a frame without a person: scores too low for
    the presence rule, or all zero where MoveNet loses the person)."""
    p = dict(CALIBRATED, **(params or {}))
    T = kp.shape[0]
    W, H = size
    body = body_scale(kp)
    # the person's height in the frame, per frame (a squat or a push-up is lower than standing)
    height = (kp[..., 1].max(1) - kp[..., 1].min(1)) / H

    logit = np.asarray(p["base"])[GROUP_OF_JOINT][None, :] + p["size_slope"] * (np.minimum(height, 1.0) - 0.5)[:, None]
    logit = logit + rng.normal(0, p["session_sd"]) + rng.normal(0, p["joint_sd"], 17)[None, :]
    logit = logit + p["frame_sd"] * _ar1(rng, (T, 17), p["frame_rho"])
    for a, b in PAIRS:
        dz = depth[:, a] - depth[:, b]
        logit[dz > 0.12, a] -= p["occlusion"]
        logit[dz < -0.12, b] -= p["occlusion"]
    # MoveNet now and then misses a joint for a frame or two (real scores have a heavy low tail:
    # most of a joint's frames score high, a few very low, in short runs)
    missed = rng.random((T, 17)) < np.asarray(p["miss"])[GROUP_OF_JOINT][None, :]
    missed[1:] |= missed[:-1] & (rng.random((T - 1, 17)) < 0.3)
    logit[missed] -= p["miss_drop"]
    outside = (kp[..., 0] < 0) | (kp[..., 0] >= W) | (kp[..., 1] < 0) | (kp[..., 1] >= H)
    logit[outside] -= 3.0
    score = _quantised(logit)

    # position error: larger as the score falls (1 at score 1, jitter_low at 0.3 and below)
    low = np.clip((1.0 - score) / 0.7, 0.0, 1.0)
    sigma = body * p["jitter"] * (1.0 + (p["jitter_low"] - 1.0) * low)
    xy = kp + _ar1(rng, (T, 17, 2), p["jitter_rho"]) * sigma[..., None]
    stray = (score < 0.5) & (rng.random((T, 17)) < p["stray_rate"])
    if stray.any():
        angle = rng.uniform(0, 2 * np.pi, stray.sum())
        distance = rng.uniform(0.5, 1.5, stray.sum()) * body
        xy[stray] += np.stack([np.cos(angle), np.sin(angle)], -1) * distance[:, None]
    xy[..., 0] = np.clip(xy[..., 0], -0.02 * W, 1.02 * W)
    xy[..., 1] = np.clip(xy[..., 1], -0.02 * H, 1.02 * H)

    out = np.concatenate([xy, score[..., None]], -1)
    swapped = _bursts(rng, T, p["swap_rate"], p["swap_frames"])
    if swapped.any():
        out[swapped] = out[swapped][:, swap_index(rng.integers(3))]  # the whole body, the legs or the arms
    lost = _bursts(rng, T, p["lost_rate"], 1.5)
    out[lost] = 0.0
    return out
