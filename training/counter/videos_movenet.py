"""Stand-in for `posewatch replay --action` until replay exists: the dev videos through MoveNet
(LiteRT, full frame letterboxed to 192×192, no cropping or tracking) and the reference counter.

    /work/venv-counter/bin/pip install ai-edge-litert
    /work/venv-counter/bin/python training/counter/videos_movenet.py [--cache /tmp/posewatch-movenet]

Keypoints are cached as .npy float32[T,17,3] (x, y, score in pixels) at 15 fps outside the repo;
they are also valid input for `posewatch replay KEYPOINTS.npy --fps 15` later.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess

import numpy as np

import counter
import data

MODEL = os.path.join(os.path.dirname(data.SHARED_DATA), "models", "movenet_singlepose_lightning_int8_4.tflite")


def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height:stream_side_data=rotation", "-of", "json", path],
                         capture_output=True, text=True, check=True).stdout
    stream = json.loads(out)["streams"][0]
    return int(stream["width"]), int(stream["height"])


def frames(path, fps=15.0):
    """Decoded RGB frames at fps (ffmpeg applies any rotation, so sizes come from the output)."""
    w, h = probe(path)
    # Let ffmpeg scale to a known size so rotation metadata cannot change the frame shape on us.
    proc = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", f"fps={fps}", "-f", "rawvideo",
                           "-pix_fmt", "rgb24", "-"], capture_output=True, check=True)
    raw = np.frombuffer(proc.stdout, np.uint8)
    for (fw, fh) in ((w, h), (h, w)):
        if raw.size % (fw * fh * 3) == 0:
            n = raw.size // (fw * fh * 3)
            return raw.reshape(n, fh, fw, 3), fw, fh
    raise RuntimeError(f"cannot infer frame size for {path}")


def movenet(rgb_frames, w, h):
    from ai_edge_litert.interpreter import Interpreter
    interp = Interpreter(model_path=MODEL, num_threads=1)
    interp.allocate_tensors()
    inp = interp.get_input_details()[0]
    out = interp.get_output_details()[0]
    side = max(w, h)
    scale = 192 / side
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    ox, oy = (192 - nw) // 2, (192 - nh) // 2
    poses = np.zeros((len(rgb_frames), 17, 3), np.float32)
    # nearest-neighbour letterbox (a proxy for the pipeline's resize)
    xs = np.minimum((np.arange(nw) / scale).astype(int), w - 1)
    ys = np.minimum((np.arange(nh) / scale).astype(int), h - 1)
    for i, f in enumerate(rgb_frames):
        canvas = np.zeros((192, 192, 3), np.uint8)
        canvas[oy:oy + nh, ox:ox + nw] = f[ys][:, xs]
        interp.set_tensor(inp["index"], canvas[None].astype(inp["dtype"]))
        interp.invoke()
        k = interp.get_tensor(out["index"])[0, 0]  # (y, x, score) in [0,1] of the 192 square
        poses[i, :, 0] = (k[:, 1] * 192 - ox) / scale
        poses[i, :, 1] = (k[:, 0] * 192 - oy) / scale
        poses[i, :, 2] = k[:, 2]
    return poses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="/tmp/posewatch-movenet")
    args = ap.parse_args()
    os.makedirs(args.cache, exist_ok=True)
    videos = os.path.join(data.SHARED_DATA, "videos")
    with open(os.path.join(videos, "labels.csv")) as f:
        clips = [r for r in csv.DictReader(f) if r["reps"]]
    within_clip = within_span = 0
    preds_clip, preds_span, gts = [], [], []
    for clip in clips:
        cache = os.path.join(args.cache, os.path.splitext(os.path.basename(clip["file"]))[0] + ".npy")
        if not os.path.exists(cache):
            rgb, w, h = frames(os.path.join(videos, clip["file"]))
            np.save(cache, movenet(rgb, w, h))
        poses = np.load(cache)
        label = clip["label"]
        action = label if label in counter.COUNTABLE else "squats"
        whole = counter.count_sequence(poses, action=action)
        a, b = int(float(clip["active_from_s"]) * 15), int(float(clip["active_to_s"]) * 15) + 1
        span = counter.count_sequence(poses[a:b], action=action)
        gt, tol = int(clip["reps"]), int(clip["reps_tolerance"] or 0)
        # `other` is never counted by design: its reference count is the repetitive-but-not-ours
        # hard negative, where 0 is the right answer for us.
        if label == "other":
            p_clip = p_span = 0
        else:
            p_clip, p_span = whole.session, span.session
        if label == "other":
            ok_clip, ok_span = p_clip == 0, p_span == 0
        else:
            ok_clip, ok_span = abs(p_clip - gt) <= tol, abs(p_span - gt) <= tol
        if label != "other":
            within_clip += ok_clip
            within_span += ok_span
            preds_clip.append(p_clip)
            preds_span.append(p_span)
            gts.append(gt)
        mean_score = poses[:, :, 2].mean()
        print(f"{clip['file']:32s} {label:14s} gt {gt:3d} ±{tol}  whole clip {p_clip:3d} {'ok' if ok_clip else 'MISS':4s}"
              f"  active span {p_span:3d} {'ok' if ok_span else 'MISS':4s}  (mean score {mean_score:.2f}, "
              f"{len(poses) / 15:.1f} s; would count {whole.session} if labelled as an exercise)")
    n = len(gts)
    mae, obo = data.mae_obo(preds_clip, gts)
    print(f"whole clip (as replay --action): {within_clip}/{n} within tolerance, MAE {mae:.3f} OBO {obo:.3f}")
    mae, obo = data.mae_obo(preds_span, gts)
    print(f"active span only:                {within_span}/{n} within tolerance, MAE {mae:.3f} OBO {obo:.3f}")


if __name__ == "__main__":
    main()
