"""Loading the real keypoint sets the repetition counter is measured on.

Nothing here is committed data: every loader reads from ../shared/data (relative to the package
root) and yields COCO-17 poses as float32[T, 17, 3] = (x, y, score) at the model frame rate.
"""
from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass

import numpy as np

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_DATA = os.path.join(os.path.dirname(PACKAGE_ROOT), "shared", "data")
COUNTIX = os.path.join(SHARED_DATA, "keypoints", "countix_fitness")
PENN = os.path.join(SHARED_DATA, "keypoints", "penn_action_coco17")
REPCOUNT = os.path.join(SHARED_DATA, "keypoints", "repcount_half")

# MediaPipe BlazePose-33 landmark index for each COCO-17 joint (data README).
MEDIAPIPE_FOR_COCO = [0, 2, 5, 7, 8, 11, 12, 13, 14, 15, 16, 23, 24, 25, 26, 27, 28]

# The model frame rate the counter runs at (the classifier's, issue 8).
MODEL_FPS = 15.0
# Countix (RepCount) and Penn Action clips are about 30 fps; every second frame gives 15 fps.
SOURCE_FPS = 30.0

# Our action labels for the dataset classes (None: a repetitive move that is not one of ours).
COUNTIX_ACTION = {"squat": "squats", "lunge": "lunges", "push_up": "push_ups"}
REPCOUNT_ACTION = {"squat": "squats", "push_up": "push_ups", "jumping_jacks": "jumping_jacks"}
PENN_ACTION = {"squat": "squats", "pushup": "push_ups", "jumping_jacks": "jumping_jacks"}
# The fixed label for a class that is none of ours (bench press, sit-ups, front raises...): posewatch
# never names these, so they measure the motion rule alone. They are counted under a label without a
# per-action cue (counter.Config.leg_cue gates squats and lunges only) and with the rule for every
# label (`Sequence.by_rule`: counter.Config.phase_labels emptied, `posewatch replay --motion-rule`),
# since the phase net counts push-ups, squats, jumping jacks and burpees (round 17).
GENERIC_LABEL = "push_ups"


# A sequence whose labelled repetitions, spread over the whole video, come slower than one per
# SPARSE_PERIOD_S seconds is mostly something else (setting up, walking, talking): the issue's
# slowest tempo is 0.3 reps/s, so even with pauses a set is denser than this. With the label fixed
# for the whole video nothing gates that other movement, so these are reported apart.
SPARSE_PERIOD_S = 6.0


@dataclass
class Sequence:
    name: str
    dataset_label: str
    action: str | None  # our label, when the class is one of ours
    count: int | None
    poses: np.ndarray  # float32[T, 17, 3] at MODEL_FPS; score 0 = missing
    fps: float

    @property
    def is_sparse(self) -> bool:
        """Mostly other movement: the labelled repetitions come slower than one per SPARSE_PERIOD_S."""
        return self.count is not None and len(self.poses) / self.fps / self.count > SPARSE_PERIOD_S

    @property
    def label(self) -> str:
        """The label replay --action gets for this sequence."""
        return self.action or GENERIC_LABEL

    @property
    def by_rule(self) -> bool:
        """A class posewatch does not name: counted by the motion rule alone (GENERIC_LABEL)."""
        return self.action is None


def subsample(poses: np.ndarray, source_fps: float = SOURCE_FPS, fps: float = MODEL_FPS, phase: int = 0) -> np.ndarray:
    """Picks the frame nearest each model-rate timestamp (as the time-aligned window does).

    `phase` shifts the picks by that many source frames (1: the odd frames of a 30 fps clip
    instead of the even ones): the same videos sampled differently, to tell a variant's real
    effect from the luck of which frames were kept.
    """
    n = len(poses)
    duration = n / source_fps
    times = np.arange(0.0, duration, 1.0 / fps)
    idx = np.minimum(np.round(times * source_fps).astype(int) + phase, n - 1)
    return poses[idx]


def countix_to_coco(rows: np.ndarray) -> np.ndarray:
    """float[T, 99] MediaPipe-33 (x, y, z) → float32[T, 17, 3] COCO-17 (x, y, score).

    An all-zero row is "no detection": every score is 0 there, 1 elsewhere.
    """
    landmarks = rows.reshape(len(rows), 33, 3)
    out = np.zeros((len(rows), 17, 3), np.float32)
    out[:, :, :2] = landmarks[:, MEDIAPIPE_FOR_COCO, :2]
    detected = np.any(rows != 0, axis=1)
    out[:, :, 2] = detected[:, None].astype(np.float32)
    return out


def load_countix(subsample_to_model_rate: bool = True, phase: int = 0, convert=countix_to_coco) -> list[Sequence]:
    """`convert`: float[T, 99] rows → float32[T, 17, 3] poses, frame by frame (so it runs after the
    subsampling)."""
    seqs = []
    with open(os.path.join(COUNTIX, "index.csv")) as f:
        for row in csv.DictReader(f):
            if row["usable"] != "1":
                continue
            raw = np.load(os.path.join(COUNTIX, row["npy"]))
            if subsample_to_model_rate:
                raw = subsample(raw, phase=phase)
            poses = convert(raw)
            seqs.append(Sequence(os.path.basename(row["npy"]), row["label"], COUNTIX_ACTION.get(row["label"]),
                                 int(row["count"]), poses, MODEL_FPS if subsample_to_model_rate else SOURCE_FPS))
    return seqs


# An annotated repetition shorter than this is not a repetition (the fastest in the data, jumping
# jacks at 2.3 per second, take 0.4 s): the sequence's annotation is wrong and it is left out
# (repcount_half README: "a few annotations look wrong").
MIN_REPETITION_S = 0.25


@dataclass
class RepCountSequence(Sequence):
    repetitions: list = None  # [(start, end)] in seconds, one per annotated repetition
    excluded: str = ""        # why the annotation is not used ("" = used)

    @property
    def subject(self) -> str:
        """The person: `stuN` for RepCount's own recordings; the file's name otherwise (its source
        clips do not say who is in them)."""
        return self.name.split("_")[0] if self.name.startswith("stu") else self.name

    @property
    def half(self) -> str:
        """"tune" or "report", by subject: odd student numbers tune, even ones report; other files
        by a hash of their name. A subject's sequences are never split between the halves."""
        if self.name.startswith("stu"):
            return "tune" if int(self.subject[3:]) % 2 == 1 else "report"
        return "tune" if hashlib.sha256(self.name.encode()).digest()[0] % 2 == 1 else "report"


def load_repcount(phase: int = 0) -> list[RepCountSequence]:
    """repcount_half: MediaPipe-33 poses min–max normalised per frame like Countix, 30 fps source
    (README), run at the model rate; `rep_bounds` (source frames) become seconds on the same clock
    (source frame f is at f / SOURCE_FPS; model frame i at i / MODEL_FPS)."""
    seqs = []
    with open(os.path.join(REPCOUNT, "index.csv")) as f:
        for row in csv.DictReader(f):
            raw = np.load(os.path.join(REPCOUNT, row["file"]))
            bounds = np.asarray(row["rep_bounds"].split(), float).reshape(-1, 2) / SOURCE_FPS
            count = int(row["count"])
            excluded = ""
            if len(bounds) != count:
                excluded = f"{len(bounds)} bounds for a count of {count}"
            elif count and float(np.min(bounds[:, 1] - bounds[:, 0])) < MIN_REPETITION_S:
                short = int(np.sum(bounds[:, 1] - bounds[:, 0] < MIN_REPETITION_S))
                excluded = (f"{short} of {count} repetitions shorter than {MIN_REPETITION_S} s "
                            f"(annotated {bounds[0, 0]:.1f}–{bounds[-1, 1]:.1f} s)")
            name = os.path.splitext(os.path.basename(row["file"]))[0]
            seqs.append(RepCountSequence(name, row["label"], REPCOUNT_ACTION.get(row["label"]), count,
                                         countix_to_coco(subsample(raw, phase=phase)), MODEL_FPS,
                                         [tuple(b) for b in bounds.tolist()], excluded))
    return seqs


def load_penn(subsample_to_model_rate: bool = True) -> list[Sequence]:
    seqs = []
    with open(os.path.join(PENN, "index.csv")) as f:
        for row in csv.DictReader(f):
            poses = np.load(os.path.join(PENN, row["action"], row["id"] + ".npy")).astype(np.float32)
            # Annotators placed occluded joints too (visible = 0): their positions are estimates, kept
            # as present; joints never annotated (eyes, ears) are all zero and stay missing.
            poses[:, :, 2] = np.any(poses[:, :, :2] != 0, axis=2).astype(np.float32)
            if subsample_to_model_rate:
                poses = subsample(poses)
            seqs.append(Sequence(row["id"], row["action"], PENN_ACTION.get(row["action"]), None, poses,
                                 MODEL_FPS if subsample_to_model_rate else SOURCE_FPS))
    return seqs


def mae_obo(pred, gt) -> tuple[float, float]:
    pred = np.asarray(pred, float)
    gt = np.asarray(gt, float)
    return float(np.mean(np.abs(pred - gt) / gt)), float(np.mean(np.abs(pred - gt) <= 1))
