#!/usr/bin/env python3
"""DEV ONLY: MoveNet keypoints for the real dev videos, in Python, until the Swift replay exists.

Decodes each clip with ffmpeg at the model frame rate (fps filter = time-aligned sampling),
letterboxes to 192x192 (aspect kept, centred, black pad) exactly as computed here, runs MoveNet
SinglePose Lightning int8 with LiteRT, maps keypoints back to frame pixels and writes
float32[T,17,3] (x, y, score) .npy files plus a frames.json (size, fps) into OUT (default
/tmp/posewatch_video_kp). Never commit the output: it is derived from ../shared/data.
"""
import argparse, csv, json, os, subprocess, sys
import numpy as np

DATA = "/work/shared/data/videos"
MODEL = "/work/shared/models/movenet_singlepose_lightning_int8_4.tflite"


def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height:stream_side_data=rotation", "-of", "json", path],
                         check=True, capture_output=True, text=True).stdout
    s = json.loads(out)["streams"][0]
    w, h = s["width"], s["height"]
    rot = 0
    for sd in s.get("side_data_list", []) or []:
        if "rotation" in sd:
            rot = int(sd["rotation"])
    if abs(rot) % 180 == 90:
        w, h = h, w
    return w, h


def extract(path, fps, interp):
    w, h = probe(path)
    s = min(192.0 / w, 192.0 / h)
    sw, sh = max(1, int(round(w * s))), max(1, int(round(h * s)))
    px, py = (192 - sw) // 2, (192 - sh) // 2
    vf = f"fps={fps},scale={sw}:{sh}:flags=bilinear,pad=192:192:{px}:{py}:black,format=rgb24"
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vf", vf, "-f", "rawvideo", "-"],
                         check=True, capture_output=True).stdout
    frames = np.frombuffer(raw, np.uint8).reshape(-1, 192, 192, 3)
    inp = interp.get_input_details()[0]
    outd = interp.get_output_details()[0]
    res = np.zeros((len(frames), 17, 3), np.float32)
    sx, sy = sw / w, sh / h
    for i, f in enumerate(frames):
        interp.set_tensor(inp["index"], f[None].astype(inp["dtype"]))
        interp.invoke()
        k = interp.get_tensor(outd["index"])[0, 0]  # (17,3) y,x,score in [0,1]
        res[i, :, 0] = (k[:, 1] * 192.0 - px) / sx
        res[i, :, 1] = (k[:, 0] * 192.0 - py) / sy
        res[i, :, 2] = k[:, 2]
    return res, (w, h)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fps", type=float, default=15.0)
    ap.add_argument("--out", default="/tmp/posewatch_video_kp")
    a = ap.parse_args()
    from ai_edge_litert.interpreter import Interpreter
    interp = Interpreter(model_path=MODEL, num_threads=1)
    interp.allocate_tensors()
    os.makedirs(a.out, exist_ok=True)
    meta = {}
    rows = list(csv.DictReader(open(os.path.join(DATA, "labels.csv"))))
    for r in rows:
        src = os.path.join(DATA, r["file"])
        kp, (w, h) = extract(src, a.fps, interp)
        name = r["file"].replace("/", "__").replace(".mp4", ".npy")
        np.save(os.path.join(a.out, name), kp)
        meta[r["file"]] = {"npy": name, "width": w, "height": h, "fps": a.fps, "frames": len(kp)}
        print(r["file"], kp.shape, w, h, flush=True)
    json.dump(meta, open(os.path.join(a.out, "frames.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
