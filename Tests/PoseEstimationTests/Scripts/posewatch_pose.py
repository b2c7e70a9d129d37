"""posewatch's pose stage reimplemented in numpy, for LiteRT goldens and measurements.

Developers run the scripts next to this file; CI does not. Every function here mirrors a Swift
source file operation for operation, so that LiteRT fed by it sees exactly the uint8 tensors our
estimator builds (the Swift test checks that through tensor fingerprints):

* `read_y4m`            Sources/Capture/FileSources.swift  (Y4MFileSource: header, colour range, planes)
* `fill_table`, `convert_yuv420`
                        Sources/Capture/FrameConverter.swift (half-pixel bilinear tables in Double,
                        8-bit weights rounded half away from zero, integer interpolation, BT.601)
* `whole_frame`, `next_region`
                        Sources/PoseEstimation/CropRegion.swift (letterbox square, CropPolicy in Float)
* `decode`, `is_person` Sources/PoseEstimation/MoveNetOutput.swift (frame = min + normalised × side,
                        PersonPresenceRule)
* `OneEuro`             Sources/PoseEstimation/KeypointSmoother.swift

Float arithmetic is float32 where Swift uses Float (np.float32 scalars, same operation order) and
Python floats where Swift uses Double.
"""
import math
import os
import subprocess

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SHARED = os.path.join(ROOT, "..", "shared")
MODEL = os.path.join(SHARED, "models", "movenet_singlepose_lightning_int8_4.tflite")
VIDEOS = os.path.join(SHARED, "data", "videos")
SIDE = 192
F32 = np.float32

# Joint indices (COCO-17, MoveNet order).
NOSE, L_SHOULDER, R_SHOULDER, L_HIP, R_HIP = 0, 5, 6, 11, 12
TORSO = (L_SHOULDER, R_SHOULDER, L_HIP, R_HIP)


# MARK: frames

class Y4M:
    """Frames of a Y4M 4:2:0 file as Y4MFileSource reads them: (luma, cb, cr) uint8 planes."""

    def __init__(self, path):
        data = open(path, "rb").read()
        header_end = data.index(b"\n")
        tokens = data[:header_end].decode().split(" ")
        assert tokens[0] == "YUV4MPEG2", path
        self.width = self.height = 0
        self.fps = 30.0
        colorspace, self.full_range = "420jpeg", False
        for token in tokens[1:]:
            key, value = token[:1], token[1:]
            if key == "W":
                self.width = int(value)
            elif key == "H":
                self.height = int(value)
            elif key == "F":
                rate, scale = value.split(":")
                self.fps = int(rate) / int(scale)
            elif key == "C":
                colorspace = value
            elif key == "X" and value == "COLORRANGE=FULL":
                self.full_range = True
        assert colorspace in ("420jpeg", "420mpeg2", "420paldv", "420"), colorspace
        w, h = self.width, self.height
        cw, ch = (w + 1) // 2, (h + 1) // 2
        size = w * h + 2 * cw * ch
        self.frames = []  # raw frame bytes (what the fingerprint covers)
        position = header_end + 1
        while position + 6 <= len(data) and data[position:position + 5] == b"FRAME":
            start = data.index(b"\n", position) + 1
            if start + size > len(data):
                break
            self.frames.append(data[start:start + size])
            position = start + size

    def planes(self, index):
        raw = np.frombuffer(self.frames[index], dtype=np.uint8)
        w, h = self.width, self.height
        cw, ch = (w + 1) // 2, (h + 1) // 2
        luma = raw[: w * h].reshape(h, w)
        cb = raw[w * h: w * h + cw * ch].reshape(ch, cw)
        cr = raw[w * h + cw * ch:].reshape(ch, cw)
        return luma, cb, cr


def y4m_stream(clip, start=None, duration=None, fps=None, vf_extra=None):
    """Yields (luma, cb, cr, full_range) frames of a clip decoded by ffmpeg to Y4M 4:2:0 through a
    pipe (for long clips: nothing is held but the current frame)."""
    command = ["ffmpeg", "-v", "error", "-nostdin"]
    if start is not None:
        command += ["-ss", str(start)]
    if duration is not None:
        command += ["-t", str(duration)]
    command += ["-i", clip]
    filters = [f for f in (f"fps={fps}" if fps else None, vf_extra) if f]
    if filters:
        command += ["-vf", ",".join(filters)]
    command += ["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "-"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    header = process.stdout.readline().decode().split()
    width = int(next(t[1:] for t in header if t[0] == "W"))
    height = int(next(t[1:] for t in header if t[0] == "H"))
    full_range = "XCOLORRANGE=FULL" in header
    cw, ch = (width + 1) // 2, (height + 1) // 2
    size = width * height + 2 * cw * ch
    while True:
        line = process.stdout.readline()
        if not line.startswith(b"FRAME"):
            break
        raw = process.stdout.read(size)
        if len(raw) < size:
            break
        data = np.frombuffer(raw, dtype=np.uint8)
        yield (data[: width * height].reshape(height, width),
               data[width * height: width * height + cw * ch].reshape(ch, cw),
               data[width * height + cw * ch:].reshape(ch, cw), full_range)
    process.stdout.close()
    process.wait()


def ffmpeg_y4m(clip, output, start=None, fps=None, frames=None, vf_extra=None):
    """Decodes a clip to Y4M 4:2:0 with Debian's ffmpeg (input seeking is frame-accurate when decoding)."""
    command = ["ffmpeg", "-v", "error", "-nostdin", "-y"]
    if start is not None:
        command += ["-ss", str(start)]
    command += ["-i", clip]
    filters = []
    if fps is not None:
        filters.append(f"fps={fps}")
    if vf_extra:
        filters.append(vf_extra)
    if filters:
        command += ["-vf", ",".join(filters)]
    if frames is not None:
        command += ["-frames:v", str(frames)]
    command += ["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", output]
    subprocess.run(command, check=True)
    return command


def fnv1a64(data):
    """FNV-1a 64-bit over bytes (the fingerprint the Swift tests recompute)."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def frame_fingerprint(data):
    """A fast 64-bit fingerprint of a large frame, computed with numpy: the bytes as little-endian
    8-byte words (zero-padded), sum(word_i * (2i + 1)) mod 2^64, xored with the byte count. Any
    single changed byte changes it (odd multipliers are invertible mod 2^64). Not cryptographic:
    it only tells a different decoder's frames from the ones the goldens were made from."""
    padded = data + b"\0" * (-len(data) % 8)
    words = np.frombuffer(padded, dtype="<u8")
    with np.errstate(over="ignore"):
        multipliers = np.arange(len(words), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        value = int(np.sum(words * multipliers, dtype=np.uint64))
    return f"{value ^ len(data):016x}"


# MARK: FrameConverter (Y'CbCr 4:2:0 → RGB tensor)

def round_half_away(value):
    """Swift's `rounded()` (to nearest, ties away from zero) for value >= 0, exactly."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def fill_table(count, origin, extent, size):
    """FrameConverter.fillTable: per tensor pixel (first source pixel or -1, second, weight 0…256)."""
    step = extent / count
    last = float(size - 1)
    table = np.zeros((count, 3), dtype=np.int64)
    for index in range(count):
        centre = origin + (float(index) + 0.5) * step
        if centre < 0 or centre >= float(size):
            table[index] = (-1, -1, 0)
            continue
        position = min(max(centre - 0.5, 0.0), last)
        first = int(position)
        weight = int(round_half_away((position - float(first)) * 256))
        if weight == 256:
            first += 1
            weight = 0
        table[index] = (first, min(first + 1, size - 1), weight)
    return table


def convert_yuv420(luma, cb, cr, full_range, region, side=SIDE):
    """FrameConverter.convert over a square region (min_x, min_y, side) given as float32 values,
    widened to Double like FrameRectangle(x: Double(region.minX), …)."""
    height, width = luma.shape
    min_x, min_y, extent = (float(v) for v in region)
    columns = fill_table(side, min_x, extent, width)
    rows = fill_table(side, min_y, extent, height)
    valid_rows = rows[:, 0] >= 0
    valid_columns = columns[:, 0] >= 0
    top, bottom, weight_b = np.maximum(rows[:, 0], 0), rows[:, 1].clip(0), rows[:, 2]
    x0, x1, weight_r = np.maximum(columns[:, 0], 0), columns[:, 1].clip(0), columns[:, 2]
    weight_a, weight_l = 256 - weight_b, 256 - weight_r

    def interpolate(plane, shift):
        p = plane.astype(np.int64)
        ya, yb = (top >> shift)[:, None], (bottom >> shift)[:, None]
        xa, xb = (x0 >> shift)[None, :], (x1 >> shift)[None, :]
        a, b, c, d = p[ya, xa], p[ya, xb], p[yb, xa], p[yb, xb]
        wl, wr = weight_l[None, :], weight_r[None, :]
        wa, wb = weight_a[:, None], weight_b[:, None]
        return ((a * wl + b * wr) * wa + (c * wl + d * wr) * wb + 128) >> 8

    y, u, v = interpolate(luma, 0), interpolate(cb, 1), interpolate(cr, 1)
    if full_range:
        scale, offset, r_cr, g_cb, g_cr, b_cb = 256, 0, 359, 88, 183, 454
    else:
        scale, offset, r_cr, g_cb, g_cr, b_cb = 298, 16 * 256, 409, 100, 208, 516
    lum = scale * (y - offset) + 32768
    blue, red = u - 32768, v - 32768
    rgb = np.stack([(lum + r_cr * red) >> 16, (lum - g_cb * blue - g_cr * red) >> 16, (lum + b_cb * blue) >> 16], axis=-1)
    rgb = rgb.clip(0, 255).astype(np.uint8)
    rgb[~valid_rows, :, :] = 0
    rgb[:, ~valid_columns, :] = 0
    return rgb


# MARK: CropRegion, CropPolicy, MoveNetOutput, PersonPresenceRule

def whole_frame(width, height):
    side = F32(max(width, height))
    return (F32((F32(width) - side) / F32(2)), F32((F32(height) - side) / F32(2)), side)


def decode(output, region):
    """MoveNetOutput.decode: [17, 3] (x, y, score) in frame pixels from the raw (y, x, score)."""
    min_x, min_y, side = region
    raw = np.asarray(output, dtype=F32).reshape(17, 3)
    pose = np.empty((17, 3), dtype=F32)
    for joint in range(17):
        pose[joint, 0] = F32(min_x + F32(raw[joint, 1] * side))
        pose[joint, 1] = F32(min_y + F32(raw[joint, 0] * side))
        pose[joint, 2] = raw[joint, 2]
    return pose


def is_person(pose, keypoint_score=F32(0.24), minimum=6):
    scores = pose[:, 2]
    confident = int(np.sum(scores >= keypoint_score))
    shoulder = max(scores[L_SHOULDER], scores[R_SHOULDER]) >= keypoint_score
    hip = max(scores[L_HIP], scores[R_HIP]) >= keypoint_score
    return confident >= minimum and shoulder and hip


def next_region(pose, width, height, minimum_score=F32(0.2), torso_expansion=F32(1.9), body_expansion=F32(1.2)):
    """CropPolicy.nextRegion after a pose (None: nobody)."""
    whole = whole_frame(width, height)
    if pose is None:
        return whole
    s = pose[:, 2]
    if not ((s[L_HIP] > minimum_score or s[R_HIP] > minimum_score)
            and (s[L_SHOULDER] > minimum_score or s[R_SHOULDER] > minimum_score)):
        return whole
    w, h = F32(width), F32(height)
    cx = F32(F32(pose[L_HIP, 0] + pose[R_HIP, 0]) / F32(2))
    cy = F32(F32(pose[L_HIP, 1] + pose[R_HIP, 1]) / F32(2))
    torso_x = torso_y = F32(0)
    for joint in TORSO:
        torso_x = max(torso_x, abs(F32(cx - pose[joint, 0])))
        torso_y = max(torso_y, abs(F32(cy - pose[joint, 1])))
    body_x = body_y = F32(0)
    for joint in range(17):
        if s[joint] >= minimum_score:
            body_x = max(body_x, abs(F32(cx - pose[joint, 0])))
            body_y = max(body_y, abs(F32(cy - pose[joint, 1])))
    half = max(F32(torso_x * torso_expansion), F32(torso_y * torso_expansion),
               F32(body_x * body_expansion), F32(body_y * body_expansion))
    half = min(half, max(cx, F32(w - cx), cy, F32(h - cy)))
    if not (half > 0 and half <= F32(max(w, h) / F32(2))):
        return whole
    return (F32(cx - half), F32(cy - half), F32(half * F32(2)))


# MARK: LiteRT

def interpreter(reference=True):
    """LiteRT on MoveNet: BUILTIN_REF kernels (what our kernels equal bit for bit) or XNNPACK."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    resolver = OpResolverType.BUILTIN_REF if reference else OpResolverType.AUTO
    runner = Interpreter(model_path=MODEL, experimental_op_resolver_type=resolver, num_threads=1)
    runner.allocate_tensors()
    return runner


def run(runner, tensor):
    runner.set_tensor(runner.get_input_details()[0]["index"], tensor[None])
    runner.invoke()
    return runner.get_tensor(runner.get_output_details()[0]["index"]).reshape(17, 3).copy()


class Estimator:
    """MoveNetEstimator: letterbox or the crop around the previous person, run, decode, presence."""

    def __init__(self, runner, smart_cropping=True):
        self.runner = runner
        self.smart_cropping = smart_cropping
        self.region = None

    def reset(self):
        self.region = None

    def estimate(self, luma, cb, cr, full_range):
        height, width = luma.shape
        region = (self.region if self.smart_cropping else None) or whole_frame(width, height)
        tensor = convert_yuv420(luma, cb, cr, full_range, region)
        output = run(self.runner, tensor)
        keypoints = decode(output, region)
        person = keypoints if is_person(keypoints) else None
        self.region = next_region(person, width, height) if person is not None else None
        return tensor, output, region, keypoints, person


# MARK: KeypointSmoother

class OneEuro:
    """KeypointSmoother (One Euro per coordinate, speed in body lengths per second; restarts a
    joint below min_score, on a new track, or after a gap over 1 s). Float64 here; the Swift
    filter uses Float. `per_pixel` measures speed in pixels per second (the former Swift filter)."""

    def __init__(self, min_cutoff=0.5, beta=8.0, d_cutoff=1.0, min_score=0.2, per_pixel=False):
        self.min_cutoff, self.beta, self.d_cutoff, self.min_score = min_cutoff, beta, d_cutoff, min_score
        self.per_pixel = per_pixel
        self.values = np.zeros((17, 2))
        self.derivatives = np.zeros((17, 2))
        self.primed = np.zeros(17, dtype=bool)
        self.last_time = -math.inf

    @staticmethod
    def alpha(cutoff, interval):
        tau = 1 / (2 * math.pi * cutoff)
        return 1 / (1 + tau / interval)

    def smooth(self, pose, time):
        interval = time - self.last_time
        if not interval > 0 or interval > 1:
            self.primed[:] = False
        self.last_time = time
        seen = pose[pose[:, 2] >= self.min_score, :2]
        size = max(float((seen.max(axis=0) - seen.min(axis=0)).max()) if len(seen) else 1.0, 1.0)
        if self.per_pixel:
            size = 1.0
        out = pose.copy()
        for joint in range(17):
            if pose[joint, 2] < self.min_score:
                self.primed[joint] = False
                continue
            if not self.primed[joint]:
                self.values[joint] = pose[joint, :2]
                self.derivatives[joint] = 0
                self.primed[joint] = True
                continue
            for axis in range(2):
                value = float(pose[joint, axis])
                speed = (value - self.values[joint, axis]) / interval / size
                a_d = self.alpha(self.d_cutoff, interval)
                derivative = a_d * speed + (1 - a_d) * self.derivatives[joint, axis]
                self.derivatives[joint, axis] = derivative
                cutoff = self.min_cutoff + self.beta * abs(derivative)
                a = self.alpha(cutoff, interval)
                filtered = a * value + (1 - a) * self.values[joint, axis]
                self.values[joint, axis] = filtered
                out[joint, axis] = filtered
        return out


def torso_size(pose):
    """Distance between the shoulder midpoint and the hip midpoint (the PCK torso normaliser)."""
    shoulders = (pose[L_SHOULDER, :2] + pose[R_SHOULDER, :2]) / 2
    hips = (pose[L_HIP, :2] + pose[R_HIP, :2]) / 2
    return float(np.hypot(*(shoulders - hips)))
