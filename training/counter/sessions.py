"""Generated workout sessions with exact per-repetition times: a counting benchmark (issue 23).

A session is what the appliance's camera sees over a couple of minutes: a person (perhaps walking
in from the side of the frame after an empty room) doing several sets of the five exercises, with
rests, other movement and walking between the sets, perhaps leaving and coming back, and perhaps
walking out at the end. It is built from the motion generator the action classifier is trained on
(`training/posegen`) and seen through its camera model and a detector model. The default detector
model (`--noise calibrated`, `posegen/detector.py`) is fitted to what posewatch's own pose stage
gives on real clips (`posegen/calibration.py`; the fit, real against generated on both halves, is
in docs/accuracy.md). `--noise harsh` is the classifier's training noise instead
(`posegen.camera.movenet_noise`: more jitter, outliers, swaps and lost frames than MoveNet shows),
a stress setting reported without a target; its annotation-like draws (a quarter of the training
clips) are drawn again, since they are not what the live MoveNet gives. The joints annotators leave
out (`dataset.hide_joints`) are not used either, and a camera that leaves the person mostly outside
the frame is drawn again.

A set has 3–20 repetitions at 0.6–3 s each (each exercise in the part of that range its generator
produces: jumping jacks 0.6–1.4 s, burpees 2–3 s), a set-wide tempo with ±12 % per repetition, and
pauses between some repetitions. The repetitions' times are exact because the set is a time warp
of the generator's own motion: the generator records its repetition phase (rep index + fraction,
fraction 0 = the rest pose; `posegen.actions.PHASE_LOG`, opt-in) and the set's output frames
sample the source motion at the phases our schedule asks for. Repetition i of a set is the
interval over which the phase goes from i to i + 1 (rest, far pose, rest again); between sets and
before the first repetition the person holds the rest pose (plank for push-ups) while the motion
blends from the previous activity, so no blend touches a repetition.

Each session is drawn from its own seed (`default_rng(seed)`), so a session does not depend on
which others are generated with it. Seeds are split: `--split tune` (seeds 2323000 on) is for
tuning the counter, `--split heldout` (seeds 2324000 on) is for reporting and must not be tuned on.

Writes per session `s<seed>.npy` (float32[T,17,3], COCO-17 x, y in frame pixels and a score; an
all-zero row is a frame without a person, as `posewatch replay FILE --fps 15` reads them; frames
on which posewatch's MoveNetEstimator would report nobody (its PersonPresenceRule) are written as
such rows, since replaying a keypoint file skips the estimator and its rule) and
`s<seed>.json` (sets with their label, repetition (start, end) times in seconds and each
repetition's far-pose time, the segments between them, camera and bucket facts), and
`index.json` listing the sessions.

    python training/counter/sessions.py --split heldout --count 40 --out /tmp/posewatch-sessions
    python training/counter/sessions.py --split heldout --count 40 --clean-poses --out /tmp/posewatch-sessions-clean
    python training/counter/sessions.py --split heldout --count 40 --noise harsh --out /tmp/posewatch-sessions-harsh

`--clean-poses` writes the same sessions with the camera's projected joints, every one scored 0.9,
instead of the detector noise (same draws: same sets, times, views and walks), so the counter can
be measured with perfect poses on the same footage.

Needs only numpy; nothing here reads ../shared or writes into the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # training/ (posegen)

from posegen import actions as A  # noqa: E402
from posegen.body import fk, random_body  # noqa: E402
from posegen.camera import garbage_frames, mirror, movenet_noise, project, share_inside  # noqa: E402
from posegen.detector import detector_noise  # noqa: E402

FPS = 15.0
EXERCISES = ["squats", "jumping_jacks", "lunges", "burpees", "push_ups"]
# Seconds per repetition: the 0.6–3 s, cut to what each generator produces natively (a
# faster or slower one is a motion the classifier never saw, not a harder test of the counter).
REP_SECONDS = {"jumping_jacks": (0.6, 1.4), "squats": (0.9, 3.0), "lunges": (1.1, 3.0),
               "push_ups": (0.8, 3.0), "burpees": (2.0, 3.0)}
REPS_PER_SET = (3, 20)
# What happens between sets: (generator, weight, kind). Rest is standing, talking, sitting;
# `other` is movement that is none of the five (stretching, fidgeting, arm circles, cardio moves,
# presses and curls, hinges, skipping rope); walking is a few steps around the room.
BETWEEN = [(A.o_idle, 3.0, "rest"), (A.o_talk, 2.0, "rest"), (A.o_floor_idle, 0.7, "rest"),
           (A.o_stretch, 1.5, "other"), (A.o_random, 1.0, "other"), (A.o_arm_circles, 0.7, "other"),
           (A.o_cardio, 1.0, "other"), (A.o_press, 1.0, "other"), (A.o_hinge, 0.7, "other"),
           (A.o_jump_rope, 0.7, "other"), (A.o_walk, 2.0, "walk")]
SPLITS = {"tune": 2323000, "heldout": 2324000}
# Buckets the evaluation reports by.
TEMPO_BUCKETS = ((1.2, "fast <1.2s"), (2.0, "medium 1.2-2s"), (np.inf, "slow >=2s"))
DISTANCE_BUCKETS = ((2.5, "near <2.5m"), (4.5, "mid 2.5-4.5m"), (np.inf, "far >=4.5m"))
# The detector's confidence in the body (mean score of shoulders to ankles while a person is seen):
# posegen draws one quality per session, from poor to good.
SCORE_BUCKETS = ((0.4, "low <0.4"), (0.55, "mid 0.4-0.55"), (np.inf, "high >=0.55"))


# posewatch's PersonPresenceRule: a person is at least 6 keypoints scoring 0.24 or more, a
# shoulder and a hip among them.
PRESENCE_SCORE = 0.24
PRESENCE_KEYPOINTS = 6


def is_person(keypoints):
    """float[T,17,3] -> bool[T]: the frames MoveNetEstimator would report a person on."""
    seen = keypoints[..., 2] >= PRESENCE_SCORE
    return (seen.sum(1) >= PRESENCE_KEYPOINTS) & seen[:, 5:7].any(1) & seen[:, 11:13].any(1)


def _bucket(value, table):
    return next(name for limit, name in table if value < limit)


def _pick(rng, table):
    w = np.array([row[1] for row in table], float)
    return table[rng.choice(len(table), p=w / w.sum())]


def _frames(seconds, fps):
    return max(1, int(round(seconds * fps)))


def _activity(rng, fn, n, fps, b):
    """n frames of a between-sets activity; walking keeps to a few steps around one spot."""
    out = fn(rng, n, fps, b)
    p = out[0] if isinstance(out, tuple) else out
    if fn is A.o_walk:
        p["x"] = p["x"] * 0.15
        p["z"] = p["z"] * 0.15
    return p


def _walk_in_place(rng, n, fps, b):
    """Walking without moving: entering and leaving move the person across the frame in pixels."""
    p = A.o_walk(rng, n, fps, b)
    p["x"] = np.zeros(n)
    p["z"] = np.zeros(n)
    return p


def _source_phase(log, n_src, fps):
    """The generator's repetition phase per source frame (phase_track's array, or burpees' cycle
    start times turned into one)."""
    if not log:
        raise RuntimeError("the exercise generator recorded no repetition phase")
    if isinstance(log[0], tuple):  # burpees: ("keys", cycle start times in seconds)
        starts = np.asarray(log[0][1], float)
        return np.interp(np.arange(n_src) / fps, starts, np.arange(len(starts), dtype=float))
    return np.asarray(log[0], float)


def make_set(rng, b, label, fps=FPS):
    """One set: (params over the part's frames, repetition (start, end) seconds from the part's
    start). The person holds the rest pose for 1.2–2.5 s before the first repetition and 1.1–2.2 s
    after the last, so the blends into and out of the set (at most 1 s either side of the boundary)
    touch no repetition."""
    n_reps = int(rng.integers(REPS_PER_SET[0], REPS_PER_SET[1] + 1))
    lo, hi = REP_SECONDS[label]
    base = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    durations = np.clip(base * rng.uniform(0.88, 1.12, n_reps), max(lo, 0.6), min(hi, 3.0))
    pauses = np.where(rng.random(n_reps - 1) < 0.15, rng.uniform(0.2, 1.2, n_reps - 1), 0.0)
    lead, tail = rng.uniform(1.2, 2.5), rng.uniform(1.1, 2.2)
    starts = lead + np.concatenate([[0.0], np.cumsum(durations[:-1] + pauses)])
    ends = starts + durations
    n_out = _frames(ends[-1] + tail, fps)
    t = np.arange(n_out) / fps
    # the phase the output asks for: i + fraction inside repetition i, held at rest elsewhere
    phase = np.zeros(n_out)
    for i, (s, e) in enumerate(zip(starts, ends)):
        phase = np.where(t >= s, np.minimum(i + (t - s) / (e - s), i + 1.0), phase)
    # the source motion, long enough for every repetition at the generator's slowest tempo
    n_src = _frames((n_reps + 4) * 8.0, fps)
    A.PHASE_LOG = []
    try:
        source, _ = A.TARGETS[label](rng, n_src, fps, b)
        source_phase = _source_phase(A.PHASE_LOG, n_src, fps)
    finally:
        A.PHASE_LOG = None
    first = np.floor(source_phase[0]) + 1.0  # the first whole repetition of the source
    if source_phase[-1] < first + n_reps:
        raise RuntimeError(f"{label}: source motion too short for {n_reps} repetitions")
    increasing = source_phase + np.arange(n_src) * 1e-9  # pauses are flat: any frame of one will do
    position = np.interp(first + phase, increasing, np.arange(n_src, dtype=float))
    params = {}
    for key, value in source.items():
        params[key] = np.interp(position, np.arange(n_src), value) if isinstance(value, np.ndarray) else value
    if label == "lunges":
        # walking lunges advance 0.5–0.9 m a repetition: 20 of them would cross any room (and the
        # camera, fitted to the whole session, would zoom out to follow); here they stay in place
        params["z"] = np.zeros(n_out)
    return params, np.stack([starts, ends], 1)


def _join(parts, fps, rng):
    """Concatenates the parts' parameters; each boundary is a smoothstep blend (0.5–1.2 s, 1–2 s
    down to the floor or up from it) from the outgoing pose, held, to the incoming one, held,
    centred on the boundary. Yaw is unwrapped so a blend never spins the person round."""
    keys = [k for k, v in parts[0]["params"].items() if isinstance(v, np.ndarray)]
    for prev, part in zip(parts, parts[1:]):
        turn = prev["params"]["yaw"][-1] - part["params"]["yaw"][0]
        part["params"]["yaw"] = part["params"]["yaw"] + 360.0 * np.round(turn / 360.0)
    out = {k: np.concatenate([p["params"][k] for p in parts]) for k in keys}
    boundary = 0
    for prev, part in zip(parts, parts[1:]):
        boundary += prev["frames"]
        # getting down to the floor or up from it (a plank, lying) takes longer than changing moves
        big = abs(out["pitch"][boundary] - out["pitch"][boundary - 1]) > 45
        half = min(_frames(rng.uniform(0.5, 1.0) if big else rng.uniform(0.25, 0.6), fps),
                   prev["frames"] // 2, part["frames"] // 2)
        if half < 1:
            continue
        lo, hi = boundary - half, boundary + half
        idx = np.arange(lo, hi)
        alpha = (idx - lo + 0.5) / (hi - lo)
        alpha = alpha * alpha * (3 - 2 * alpha)
        for k in keys:
            v = out[k]
            outgoing = np.where(idx < boundary, v[idx], v[boundary - 1])
            incoming = np.where(idx < boundary, v[boundary], v[idx])
            v[lo:hi] = outgoing * (1 - alpha) + incoming * alpha
    out["anchor"] = "floor"
    out["bar"] = 2.2
    return out


def _view(world, depth, frames):
    """The camera's view of the person over `frames`: (angle, bucket). angle 0 = the shoulder line
    across the image (seen from the front or the back), 90 = along it (from the side); front or
    back by whether the nose is nearer the camera than the shoulders' middle."""
    shoulder = world[frames, 5] - world[frames, 6]
    width = np.maximum(np.linalg.norm(shoulder, axis=-1), 1e-6)
    along = np.clip(np.abs(depth[frames, 5] - depth[frames, 6]) / width, 0, 1)
    angle = float(np.degrees(np.arcsin(np.median(along))))
    facing = float(np.mean(depth[frames, 0] < depth[frames][:, 5:7].mean(1)))
    if angle >= 60:
        return angle, "side"
    if angle >= 30:
        return angle, "oblique"
    return angle, "front" if facing >= 0.5 else "back"


def far_times(world, reps, fps):
    """Per repetition, the time of its far pose (the bottom of a squat, the top of a jumping jack):
    the frame whose joints, relative to the hips' middle, are furthest (mean over joints) from the
    repetition's first frame. Where a counter that counts at the turning point fires."""
    rel = world - world[:, 11:13].mean(1, keepdims=True)
    out = []
    for start, end in reps:
        a, b = int(round(start * fps)), max(int(round(start * fps)) + 1, min(len(world), int(round(end * fps)) + 1))
        distance = np.linalg.norm(rel[a:b] - rel[a], axis=-1).mean(1)
        out.append((a + int(np.argmax(distance))) / fps)
    return out


def make_session(seed, fps=FPS, seconds=(90.0, 150.0), clean_poses=False, noise="calibrated", detector_params=None):
    """-> (keypoints float32[T,17,3], annotation dict). `noise`: the detector model, "calibrated"
    (`posegen.detector`, fitted to MoveNet on real clips; `detector_params` override its fitted
    parameters, for calibration.py's fit) or "harsh" (`posegen.camera.movenet_noise`, the
    classifier's training noise: a stress setting). `clean_poses`: the same session (the same
    random draws, so the same sets, times, camera and walks) with the camera's projected joints and
    every joint scored 0.9 in place of the detector noise: what the counter does with perfect poses."""
    rng = np.random.default_rng(seed)
    b = random_body(rng)
    heading = rng.uniform(-180, 180)
    target = rng.uniform(*seconds)
    parts = []  # dict(kind, activity, frames, params, start frame, and for sets: label, reps, tag)
    total = [0]

    def add(kind, activity, params, **extra):
        n = len(params["x"])
        parts.append(dict(kind=kind, activity=activity, frames=n, params=params, start=total[0], **extra))
        total[0] += n

    def between(seconds_range):
        fn, _, kind = _pick(rng, BETWEEN)
        add(kind, fn.__name__, _activity(rng, fn, _frames(rng.uniform(*seconds_range), fps), fps, b))

    def leave_and_return(leave, come_back):
        if leave:
            add("walk_out", "o_walk", _walk_in_place(rng, _frames(rng.uniform(1.0, 2.5), fps), fps, b))
            add("absent", "", A.o_idle(rng, _frames(rng.uniform(*come_back), fps), fps, b))
        add("walk_in", "o_walk", _walk_in_place(rng, _frames(rng.uniform(1.0, 2.5), fps), fps, b))

    if rng.random() < 0.6:  # an empty room, then the person walks in
        add("absent", "", A.o_idle(rng, _frames(rng.uniform(0.5, 3.0), fps), fps, b))
        leave_and_return(False, None)
    between((1.0, 5.0))
    exercises = list(rng.permutation(EXERCISES))
    while True:
        if not exercises:
            exercises = list(rng.permutation(EXERCISES))
        label = str(exercises.pop())
        params, reps = make_set(rng, b, label, fps)
        turn = rng.uniform(-70, 70) if rng.random() < 0.5 else 0.0
        params["yaw"] = params["yaw"] + turn
        params["x"] = params["x"] + rng.uniform(-0.4, 0.4)
        params["z"] = params["z"] + rng.uniform(-0.4, 0.4)
        add("set", label, params, label=label, reps=reps, tag=params.get("tag", ""))
        if total[0] / fps >= target:
            break
        if rng.random() < 0.15:  # leaves the room between sets and comes back
            between((1.0, 3.0))
            leave_and_return(True, (2.0, 8.0))
        between((2.0, 12.0))
    between((2.0, 6.0))
    if rng.random() < 0.6:  # walks out at the end
        add("walk_out", "o_walk", _walk_in_place(rng, _frames(rng.uniform(1.0, 2.5), fps), fps, b))
        add("absent", "", A.o_idle(rng, _frames(rng.uniform(0.5, 3.0), fps), fps, b))
    for part in parts:
        part["params"]["yaw"] = part["params"]["yaw"] + heading

    params = _join(parts, fps, rng)
    world = fk(params, b)
    T = len(world)
    # posegen's cameras include people mostly out of the frame (partly visible in a training clip);
    # a session is someone exercising in front of the appliance, so a camera that leaves more than
    # 15 % of the joints (in place, not entering or leaving) outside the frame is drawn again.
    in_place = np.ones(T, bool)
    for part in parts:
        if part["kind"] in ("absent", "walk_in", "walk_out"):
            in_place[part["start"]:part["start"] + part["frames"]] = False
    for attempt in range(50):  # (14 redraws for the 80 tune and held-out sessions, at most 3 for one)
        kp, depth, size = project(world, heading, rng)
        width, height = size
        if share_inside(kp[in_place], size) >= 0.85:
            break
    # Entering and leaving: the person walks across the frame's edge (a lateral walk at one depth
    # is a shift in the image). Applied after the noise, so the detector's noise level is that of
    # the person in place; joints beyond the edge lose most of their score, as in movenet_noise.
    shift = np.zeros(T)
    present = np.ones(T, bool)
    side = rng.choice([-1.0, 1.0])
    for part in parts:
        lo, hi = part["start"], part["start"] + part["frames"]
        if part["kind"] == "absent":
            present[lo:hi] = False
        elif part["kind"] in ("walk_in", "walk_out"):
            xs = kp[lo:hi, :, 0]
            away = (width - xs.min() + 0.05 * width) if side > 0 else -(xs.max() + 0.05 * width)
            x = (np.arange(hi - lo) + 0.5) / (hi - lo)
            x = x * x * (3 - 2 * x)
            shift[lo:hi] = away * ((1 - x) if part["kind"] == "walk_in" else x)
            side = -side if rng.random() < 0.5 else side
    if noise == "calibrated":
        keypoints = detector_noise(kp, depth, size, rng, detector_params)
    else:
        for attempt in range(20):
            keypoints = movenet_noise(kp, depth, size, rng, float(np.mean(np.abs(params["pitch"]) > 45)))
            scores = keypoints[..., 2]
            if np.any((scores > 0) & (scores != 0.9)):
                break  # a detector-like draw (the annotation-like one has scores of 0 and 0.9 only)
    if clean_poses:  # drawn all the same, so every later draw is the noisy session's
        keypoints = np.concatenate([kp, np.full(kp.shape[:2] + (1,), 0.9)], axis=-1)
    moved = shift != 0
    keypoints[moved, :, 0] += shift[moved, None]
    outside = moved[:, None] & ((keypoints[..., 0] < 0) | (keypoints[..., 0] >= width))
    keypoints[..., 2] = np.where(outside, keypoints[..., 2] * rng.uniform(0.05, 0.4), keypoints[..., 2])
    keypoints[moved, :, 0] = np.clip(keypoints[moved, :, 0], -0.02 * width, 1.02 * width)
    gone = moved & (keypoints[..., 2].max(1) < 0.05)
    present &= ~gone
    # An empty room: MoveNet's low-score scatter, or (a detector that reports nothing) no row.
    empty = garbage_frames(rng, T, size) if rng.random() < 0.5 else np.zeros_like(keypoints)
    keypoints[~present] = empty[~present]
    # What the live path hands the pipeline: MoveNetEstimator reports nobody unless
    # PersonPresenceRule holds (Sources/PoseEstimation/MoveNetOutput.swift); a keypoint file's
    # zero row is the same nil.
    keypoints[~is_person(keypoints)] = 0.0
    mirrored = bool(rng.random() < 0.5)
    if mirrored:
        keypoints = mirror(keypoints, width)

    sets, segments = [], []
    for part in parts:
        start, end = part["start"] / fps, (part["start"] + part["frames"]) / fps
        segments.append(dict(kind=part["kind"], activity=part["activity"], start=round(start, 4), end=round(end, 4)))
        if part["kind"] != "set":
            continue
        reps = part["reps"] + start
        frames = np.arange(int(round(reps[0, 0] * fps)), min(T, int(round(reps[-1, 1] * fps))))
        angle, view = _view(world, depth, frames)
        distance = float(np.median(depth[frames][:, 11:13]))
        rep_seconds = float(np.mean(reps[:, 1] - reps[:, 0]))
        seen = frames[keypoints[frames, :, 2].max(1) > 0]
        score = float(keypoints[seen, 5:17, 2].mean()) if len(seen) else 0.0
        far = far_times(world, reps, fps)
        sets.append(dict(label=part["label"], reps=[[float(s), float(e)] for s, e in reps], far=[round(f, 4) for f in far],
                         count=len(reps), rep_seconds=round(rep_seconds, 3),
                         tempo=_bucket(rep_seconds, TEMPO_BUCKETS), view=view, view_angle=round(angle, 1),
                         distance_m=round(distance, 2), distance=_bucket(distance, DISTANCE_BUCKETS),
                         score=round(score, 3), scores=_bucket(score, SCORE_BUCKETS),
                         seen=round(len(seen) / max(len(frames), 1), 3), barbell=part["tag"] == "barbell"))
    annotation = dict(seed=int(seed), fps=fps, frames=T, seconds=round(T / fps, 4), frame_size=[int(width), int(height)],
                      mirrored=mirrored, sets=sets, segments=segments)
    return keypoints.astype(np.float32), annotation


def seeds_for(split, count, first_seed=None):
    first = SPLITS[split] if first_seed is None else first_seed
    return list(range(first, first + count))


def generate(out, seeds, fps=FPS, clean_poses=False, noise="calibrated"):
    """Writes the sessions and index.json into `out`; returns the index."""
    os.makedirs(out, exist_ok=True)
    index = []
    for seed in seeds:
        keypoints, annotation = make_session(seed, fps, clean_poses=clean_poses, noise=noise)
        name = f"s{seed}"
        np.save(os.path.join(out, name + ".npy"), keypoints)
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(annotation, f, indent=1)
        index.append(dict(name=name, seed=int(seed), seconds=annotation["seconds"], sets=len(annotation["sets"]),
                          repetitions=sum(s["count"] for s in annotation["sets"])))
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(dict(fps=fps, seeds=[int(s) for s in seeds], clean_poses=clean_poses, noise=noise, sessions=index), f, indent=1)
    return index


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/posewatch-sessions", help="folder for the sessions (created; default %(default)s)")
    ap.add_argument("--split", choices=sorted(SPLITS), default="heldout",
                    help="tune: seeds from %d; heldout: seeds from %d (default %%(default)s)" % (SPLITS["tune"], SPLITS["heldout"]))
    ap.add_argument("--count", type=int, default=40, help="number of sessions (default %(default)s)")
    ap.add_argument("--first-seed", type=int, default=None, help="start from this seed instead of the split's")
    ap.add_argument("--clean-poses", action="store_true",
                    help="the same sessions with perfect poses (projected joints, every score 0.9) instead of the "
                         "detector noise: how much of the counter's error the poses carry")
    ap.add_argument("--noise", choices=("calibrated", "harsh"), default="calibrated",
                    help="the detector model: calibrated (fitted to MoveNet on real clips, posegen/detector.py) or harsh "
                         "(the classifier's training noise, posegen/camera.py: a stress setting) (default %(default)s)")
    args = ap.parse_args()
    if args.count < 1:
        ap.error("--count must be at least 1")
    index = generate(args.out, seeds_for(args.split, args.count, args.first_seed), clean_poses=args.clean_poses,
                     noise=args.noise)
    print(f"{len(index)} sessions, {sum(s['sets'] for s in index)} sets, {sum(s['repetitions'] for s in index)} repetitions, "
          f"{sum(s['seconds'] for s in index) / 60:.1f} min -> {args.out}")


if __name__ == "__main__":
    main()
