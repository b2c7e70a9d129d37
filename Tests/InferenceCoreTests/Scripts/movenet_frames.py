#!/usr/bin/env python3
"""Decode real frames for the MoveNet end-to-end check and (optionally) compute LiteRT goldens.

Developers run this; CI does not. Frames come from ../shared/data/videos (never committed): each clip
is decoded with Debian's ffmpeg at 2 fps, scaled to 192x192 RGB24 (ffmpeg's default bicubic scaler),
and frames are taken round-robin from the clips in name order until --count frames are collected.

  # inputs only (what the Swift test regenerates itself with the same ffmpeg command):
  movenet_frames.py --count 20 --frames-out /tmp/frames.npy
  # goldens from LiteRT's reference kernels (BUILTIN_REF), committed as Fixtures/movenet_goldens.npy:
  /work/venv/bin/python movenet_frames.py --count 20 --goldens-out ../Fixtures/movenet_goldens.npy \
      --hashes-out ../Fixtures/movenet_frame_hashes.txt
  # one .npy per frame for `posewatch model run` (100-frame check):
  movenet_frames.py --count 100 --per-frame-dir /tmp/frames100 --goldens-out /tmp/frames100/expected.npy
"""
import argparse
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SHARED = os.path.join(ROOT, "..", "shared")
MODEL = os.path.join(SHARED, "models", "movenet_singlepose_lightning_int8_4.tflite")
VIDEOS = os.path.join(SHARED, "data", "videos")
SIZE = 192
FPS = 2
PER_CLIP = 40


def fnv1a64(data):
    """FNV-1a 64-bit, the frame fingerprint the Swift test recomputes to detect a different ffmpeg."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def decode(path):
    """All frames of one clip at FPS, as uint8 [n, 192, 192, 3] (same command as the Swift test)."""
    command = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-vf", f"fps={FPS},scale={SIZE}:{SIZE}",
               "-frames:v", str(PER_CLIP), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = subprocess.run(command, check=True, capture_output=True).stdout
    frame_bytes = SIZE * SIZE * 3
    count = len(raw) // frame_bytes
    return np.frombuffer(raw[: count * frame_bytes], dtype=np.uint8).reshape(count, SIZE, SIZE, 3)


def collect(count):
    clips = sorted(f for f in os.listdir(VIDEOS) if f.endswith(".mp4"))
    decoded = [decode(os.path.join(VIDEOS, clip)) for clip in clips]
    frames, index = [], 0
    while len(frames) < count:
        progressed = False
        for clip in decoded:
            if index < len(clip) and len(frames) < count:
                frames.append(clip[index])
                progressed = True
        if not progressed:
            sys.exit(f"only {len(frames)} frames available")
        index += 1
    return np.stack(frames)


def goldens(frames):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    interpreter = Interpreter(model_path=MODEL, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    interpreter.allocate_tensors()
    inp = interpreter.get_input_details()[0]["index"]
    out = interpreter.get_output_details()[0]["index"]
    results = []
    for frame in frames:
        interpreter.set_tensor(inp, frame[None])
        interpreter.invoke()
        results.append(interpreter.get_tensor(out).copy())
    return np.stack(results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--frames-out")
    parser.add_argument("--per-frame-dir")
    parser.add_argument("--goldens-out")
    parser.add_argument("--hashes-out")
    args = parser.parse_args()
    frames = collect(args.count)
    if args.frames_out:
        np.save(args.frames_out, frames)
    if args.per_frame_dir:
        os.makedirs(args.per_frame_dir, exist_ok=True)
        for i, frame in enumerate(frames):
            np.save(os.path.join(args.per_frame_dir, f"frame_{i:03d}.npy"), frame[None])
    if args.hashes_out:
        with open(args.hashes_out, "w") as f:
            for frame in frames:
                f.write(f"{fnv1a64(frame.tobytes()):016x}\n")
    if args.goldens_out:
        np.save(args.goldens_out, goldens(frames))


if __name__ == "__main__":
    main()
