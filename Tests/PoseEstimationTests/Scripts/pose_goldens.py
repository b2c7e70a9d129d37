#!/usr/bin/env python3
"""Goldens for the estimator end-to-end test: LiteRT MoveNet fed with posewatch's preprocessing.

Developers run this; CI does not. For each run below, ffmpeg decodes `frames` consecutive frames of
a clip from ../shared/data/videos at full resolution (Y4M 4:2:0, 5 fps from `start` seconds: the
command is stored in the goldens and the Swift test runs the same one). Each frame then goes
through posewatch's pose stage reimplemented bit for bit in numpy (posewatch_pose.py): the first
frame of a run is letterboxed whole, each later one is cropped around the previous frame's person
(MoveNet's smart cropping, CropPolicy) or letterboxed when nobody was there. LiteRT runs the model
with its reference kernels (BUILTIN_REF, which our int8 kernels equal bit for bit); keypoints are
mapped back to frame pixels like MoveNetOutput.decode.

Written to Fixtures/pose_goldens.json: the ffmpeg command, the runs, and per frame a fingerprint of
the decoded frame (a different ffmpeg shows up there), an FNV-1a fingerprint of the 192x192x3 input
tensor (our preprocessing must give the same bytes), the crop region and whether the presence rule
saw a person; and to Fixtures/pose_goldens.npy, float32[frames, 2, 17, 3]: [:, 0] the raw model
output (y, x, score, normalised to the input square), [:, 1] the keypoints in frame pixels
(x, y, score). Frames themselves are never committed.

  /work/venv/bin/python Tests/PoseEstimationTests/Scripts/pose_goldens.py
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import posewatch_pose as pp  # noqa: E402

FPS = 5
# (clip, start seconds, frames): one run per clip, starting 1 s into the labelled action (or at
# the start of the shorter clips), 4 frames so 3 of them go through the crop path; plus a title
# card (nobody: the letterbox path with no person, and no crop after it).
RUNS = [
    ("pushup1.mp4", 1.0, 4),
    ("pushup2.mp4", 1.0, 4),
    ("quva_other_floor_press.mp4", 8.0, 4),
    ("social_burpees.mp4", 1.5, 4),
    ("stock_lunges1.mp4", 2.0, 4),
    ("ucf101_jumping_jacks_g14.mp4", 0.5, 4),
    ("ucf101_lunges_g05.mp4", 1.0, 4),
    ("wahoo_jumping_jacks.mp4", 18.0, 4),
    ("wahoo_lunges.mp4", 7.0, 4),
    ("wahoo_squats.mp4", 12.0, 4),
    ("wahoo_squats.mp4", 2.0, 2),
]


def floats(values):
    # repr of the float32 value widened to double: parses back to exactly the same float32.
    return [float(v) for v in values]


def main():
    runner = pp.interpreter(reference=True)
    estimator = pp.Estimator(runner, smart_cropping=True)
    runs, values, command = [], [], None
    crops = letterboxes = persons = 0
    with tempfile.TemporaryDirectory() as scratch:
        for clip, start, count in RUNS:
            path = os.path.join(scratch, "run.y4m")
            command = pp.ffmpeg_y4m(os.path.join(pp.VIDEOS, clip), path, start=start, fps=FPS, frames=count)
            video = pp.Y4M(path)
            if len(video.frames) != count:
                sys.exit(f"{clip}: ffmpeg gave {len(video.frames)} frames, expected {count}")
            estimator.reset()
            frames = []
            for index in range(count):
                luma, cb, cr = video.planes(index)
                tensor, output, region, keypoints, person = estimator.estimate(luma, cb, cr, video.full_range)
                whole = region == pp.whole_frame(video.width, video.height)
                letterboxes += whole
                crops += not whole
                persons += person is not None
                frames.append({
                    "frame_fingerprint": pp.frame_fingerprint(video.frames[index]),
                    "input_fingerprint": pp.fnv1a64(tensor.tobytes()),
                    "region": floats(region),
                    "cropped": not whole,
                    "person": person is not None,
                })
                values.append(np.stack([output, keypoints]))
            runs.append({"clip": clip, "start": str(start), "fps": FPS, "width": video.width,
                         "height": video.height, "frames": frames})
            print(f"{clip} @{start}s {video.width}x{video.height}: "
                  + " ".join(("C" if f["cropped"] else "L") + ("P" if f["person"] else "-") for f in frames))
    template = [arg for arg in command]
    template[template.index("-ss") + 1] = "{start}"
    template[template.index("-i") + 1] = "{clip}"
    template[template.index("-vf") + 1] = "fps={fps}"
    template[template.index("-frames:v") + 1] = "{frames}"
    template[-1] = "{output}"
    goldens = {
        "about": "Scripts/pose_goldens.py: LiteRT BUILTIN_REF MoveNet fed with posewatch's preprocessing",
        "model": os.path.basename(pp.MODEL),
        "ffmpeg": template,
        "runs": runs,
    }
    fixtures = os.path.join(os.path.dirname(__file__), "..", "Fixtures")
    os.makedirs(fixtures, exist_ok=True)
    np.save(os.path.join(fixtures, "pose_goldens.npy"), np.stack(values).astype(np.float32))
    with open(os.path.join(fixtures, "pose_goldens.json"), "w") as f:
        json.dump(goldens, f, indent=1)
        f.write("\n")
    total = crops + letterboxes
    print(f"{total} frames: {crops} cropped around the previous pose, {letterboxes} letterboxed whole; {persons} with a person")


if __name__ == "__main__":
    main()
