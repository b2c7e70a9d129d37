"""Cameras and MoveNet-like keypoint noise."""
import numpy as np
from .body import LR_SWAP

FRAME_SIZES = [(640, 480), (1280, 720), (1920, 1080), (720, 1280), (1080, 1920), (480, 640), (320, 240),
               (640, 360), (608, 1080), (768, 432)]
# jitter multiplier per joint (face precise, wrists/ankles noisy)
JIT = np.array([0.6, 0.5, 0.5, 0.7, 0.7, 1.0, 1.0, 1.3, 1.3, 1.7, 1.7, 1.2, 1.2, 1.3, 1.3, 1.5, 1.5])
PAIRS = [(1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16)]


def _ar1(rng, shape, rho):
    e = rng.normal(0, 1, shape)
    out = np.empty(shape)
    out[0] = e[0]
    k = np.sqrt(1 - rho * rho)
    for t in range(1, shape[0]):
        out[t] = rho * out[t - 1] + k * e[t]
    return out


def _burst_mask(rng, T, rate, cont=0.6):
    m = np.zeros(T, bool)
    if rate <= 0:
        return m
    start = rate * (1 - cont)
    on = False
    for t in range(T):
        on = (rng.random() < cont) if on else (rng.random() < start)
        m[t] = on
    return m


def project(w, heading_deg, rng, view=None):
    """w (T,17,3) world joints -> (kp (T,17,2) pixels, depth (T,17), (W,H)).

    `view` (the robustness suite, posegen/suite.py; None in training) fixes some of the camera's
    random choices after they are drawn, so the RNG stream is the same: "az" (degrees from the
    person's front), "D" (m), "cam_h" (m), "frame" (W, H), "occ" (the person's share of the frame),
    "knee_cut" (True: the frame's bottom edge at the knees, lower legs out of frame)."""
    view = view or {}
    T = w.shape[0]
    hips = w[:, 11:13].mean(1)
    c = hips.mean(0)
    ext = w[..., 1].max() - max(w[..., 1].min(), 0)
    r = rng.random()
    az = rng.uniform(-100, 100) if r < 0.6 else rng.uniform(-180, 180)
    az = view.get("az", az)
    a = np.radians(heading_deg + az)
    D = rng.uniform(1.8, 7.0) if rng.random() < 0.85 else rng.uniform(1.2, 1.8)
    D = view.get("D", D)
    cam = c + D * np.array([np.sin(a), 0, np.cos(a)])
    cam[1] = view.get("cam_h", rng.uniform(0.2, 2.4))
    tgt = np.array([c[0], rng.uniform(0.2, 1.0) * max(ext, 0.5), c[2]]) + rng.normal(0, 0.1, 3)
    fwd = tgt - cam
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, [0, 1, 0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    roll = np.radians(np.clip(rng.normal(0, 4), -12, 12))
    right, up = np.cos(roll) * right + np.sin(roll) * up, -np.sin(roll) * right + np.cos(roll) * up
    rel = w - cam
    X, Y, Z = rel @ right, rel @ up, rel @ fwd
    Z = np.maximum(Z, 0.2)
    u, v = X / Z, -Y / Z
    W, H = FRAME_SIZES[rng.integers(len(FRAME_SIZES))]
    W, H = view.get("frame", (W, H))
    ex, ey = u.max() - u.min(), v.max() - v.min()
    rr = rng.random()
    occ = rng.uniform(0.35, 0.95) if rr < 0.85 else rng.uniform(0.95, 1.6)
    occ = view.get("occ", occ)
    f = occ * min(W / max(ex, 1e-3), H / max(ey, 1e-3))
    if rng.random() < 0.2 and "occ" not in view:
        f *= rng.uniform(0.4, 0.8)  # small person, lots of background
    px, py = u * f, v * f
    mx, my = (px.max() + px.min()) / 2, (py.max() + py.min()) / 2
    sx = max(W - (px.max() - px.min()), 0) / 2
    sy = max(H - (py.max() - py.min()), 0) / 2
    ox = rng.uniform(-sx, sx) * 0.9 if sx > 0 else rng.uniform(-0.2, 0.2) * W
    oy = rng.uniform(-sy, sy) * 0.9 if sy > 0 else rng.uniform(-0.25, 0.1) * H
    if rng.random() < 0.08:  # walked partly out of frame
        ox += rng.choice([-1, 1]) * rng.uniform(0.2, 0.5) * W
    kp = np.stack([px - mx + W / 2 + ox, py - my + H / 2 + oy], -1)
    if view.get("knee_cut"):
        # the frame's bottom edge at the knees (their median height): the top of the head at 5-15 %
        # of the frame, lower legs below it
        top, knee = float(v.min()), float(np.median(v[:, 13:15]))
        f = rng.uniform(0.85, 0.95) * H / max(knee - top, 1e-3)
        f = min(f, 0.95 * W / max(ex, 1e-3))
        x0 = (u.max() + u.min()) / 2
        kp = np.stack([(u - x0) * f + W / 2 + rng.uniform(-0.1, 0.1) * W,
                       (v - knee) * f + H * rng.uniform(0.97, 1.03)], -1)
    return kp, Z, (W, H)


def body_scale(kp):
    """The person's size in pixels that the detector models scale their errors by: the larger of
    the joints' 2-98 % spreads, x and y, over the whole clip, / 3.5 (+1 so it is never 0)."""
    points = kp.reshape(-1, 2)
    return max(np.percentile(points[:, 1], 98) - np.percentile(points[:, 1], 2),
               np.percentile(points[:, 0], 98) - np.percentile(points[:, 0], 2)) / 3.5 + 1.0


def movenet_noise(kp, depth, size, rng, horizontal_frac=0.0, detector_only=False):
    """kp (T,17,2) clean pixels -> (T,17,3) x,y,score as a MoveNet-like detector would give, or (a
    quarter of the clips) as a human annotator would: small jitter, no outliers, swaps or lost frames,
    hidden joints simply absent and the others fully visible (Penn Action's visibility flags).
    `detector_only` (the robustness suite): always the detector's noise, without bursts of dropped
    frames."""
    T = kp.shape[0]
    clean = rng.random() < 0.25 and not detector_only  # the suite: always the detector's noise
    W, H = size
    out = np.zeros((T, 17, 3))
    valid = np.ones(T, bool)
    s_px = body_scale(kp)
    # positional jitter (temporally correlated) and outliers
    sig = s_px * (rng.uniform(0.003, 0.012) if clean else rng.uniform(0.01, 0.05))
    rho = rng.uniform(0.0, 0.8)
    jit = _ar1(rng, (T, 17, 2), rho) * sig * JIT[None, :, None]
    xy = kp + jit
    orate = 0.0 if clean else rng.uniform(0, 0.012)
    om = rng.random((T, 17)) < orate
    if om.any():
        ang = rng.uniform(0, 2 * np.pi, om.sum())
        mag = rng.uniform(0.3, 1.0, om.sum()) * s_px
        xy[om] += np.stack([np.cos(ang), np.sin(ang)], -1) * mag[:, None]
    # scores
    base = rng.uniform(0.4, 0.85) - horizontal_frac * rng.uniform(0.0, 0.2)
    sc = base + rng.normal(0, 0.08, 17)[None] + 0.07 * _ar1(rng, (T, 17), 0.7)
    sc[:, 0:5] += rng.uniform(-0.05, 0.2)
    occl = rng.uniform(0.0, 0.3) if rng.random() < 0.7 else rng.uniform(0.3, 0.9)
    hw = s_px * 0.25
    for a, b in PAIRS:
        # the joint that is clearly further from the camera than its partner is (partly) occluded
        dz = depth[:, a] - depth[:, b]
        far_a = dz > 0.12
        far_b = dz < -0.12
        sc[far_a, a] -= occl * rng.uniform(0.5, 1.5)
        sc[far_b, b] -= occl * rng.uniform(0.5, 1.5)
    if clean or rng.random() < 0.45:
        # annotation-style occlusion: the far side is simply missing (Penn Action marks hidden joints
        # invisible; MoveNet drops them below the score threshold in side views)
        thr = rng.uniform(0.05, 0.15)
        for a, b in PAIRS[2:]:
            if rng.random() < 0.85:
                dz = depth[:, a] - depth[:, b]
                sc[dz > thr, a] = 0.0
                sc[dz < -thr, b] = 0.0
    back = depth[:, 0] > depth[:, 3:5].mean(1)  # nose behind the ears: seen from behind
    sc[back, 0:5] -= rng.uniform(0.1, 0.5)
    sc[om] *= rng.uniform(0.3, 1.0)
    oof = (xy[..., 0] < 0) | (xy[..., 0] >= W) | (xy[..., 1] < 0) | (xy[..., 1] >= H)
    sc[oof] *= rng.uniform(0.05, 0.4)
    xy[..., 0] = np.clip(xy[..., 0], -0.02 * W, 1.02 * W)
    xy[..., 1] = np.clip(xy[..., 1], -0.02 * H, 1.02 * H)
    if rng.random() < 0.12:  # face keypoints missing (annotation style / detector failure)
        sc[:, 1:5] = 0.0
    bad = rng.random(T) < rng.uniform(0, 0.04)
    sc[bad] *= rng.uniform(0.2, 0.6)
    sc = np.clip(sc, 0.0, 0.99)
    if clean:
        sc = np.where(sc >= 0.25, 0.9, 0.0)
    # left/right swaps in bursts
    if not clean and rng.random() < 0.5:
        sm = _burst_mask(rng, T, rng.uniform(0, 0.05), 0.6)
        idx = swap_index(rng.integers(3))
        xy[sm] = xy[sm][:, idx]
        sc[sm] = sc[sm][:, idx]
    out[..., :2] = xy
    out[..., 2] = sc
    # dropped frames (no pose) in bursts (not in the robustness suite: it varies one factor at a time)
    if not clean and rng.random() < 0.6 and not detector_only:
        dm = _burst_mask(rng, T, rng.uniform(0, 0.08), 0.65)
        if rng.random() < 0.5:
            out[dm] = 0.0
        else:
            out[dm] = garbage_frames(rng, T, size)[dm]
    return out


def swap_index(kind):
    """The joint order of a left/right mix-up: 0 the whole body, 1 the legs, 2 the arms."""
    index = np.arange(17)
    if kind == 0:
        return np.array(LR_SWAP)
    if kind == 1:
        index[[11, 12, 13, 14, 15, 16]] = [12, 11, 14, 13, 16, 15]
    else:
        index[[5, 6, 7, 8, 9, 10]] = [6, 5, 8, 7, 10, 9]
    return index


def share_inside(kp, size):
    """kp (..., 2) pixels, size (W, H) -> the share of the points inside the frame."""
    inside = (kp[..., 0] >= 0) & (kp[..., 0] < size[0]) & (kp[..., 1] >= 0) & (kp[..., 1] < size[1])
    return float(inside.mean())


def garbage_frames(rng, T, size):
    """what MoveNet returns on a frame without a person (title card, empty room): keypoints scattered
    around a slowly drifting blob, low scores with the hips usually highest (its prior)."""
    W, H = size
    c = np.array([rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.8) * H])
    spread = np.array([rng.uniform(0.05, 0.3) * W, rng.uniform(0.1, 0.45) * H])
    base = c + rng.normal(0, 1, (17, 2)) * spread
    xy = base[None] + _ar1(rng, (T, 17, 2), rng.uniform(0.5, 0.95)) * spread * rng.uniform(0.05, 0.4)
    sc = rng.uniform(0.02, 0.2, 17)
    sc[11:13] += rng.uniform(0.05, 0.2)
    sc = np.clip(sc[None] + 0.05 * _ar1(rng, (T, 17), 0.8) + rng.uniform(-0.05, 0.12), 0.0, 0.45)
    out = np.zeros((T, 17, 3))
    out[..., :2] = np.clip(xy, 0, [W, H])
    out[..., 2] = sc
    return out


def mirror(k, W):
    k = k[:, LR_SWAP].copy()
    nz = k[..., 2] > 0
    k[..., 0] = np.where(nz, W - k[..., 0], 0.0)
    return k
