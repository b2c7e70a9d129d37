"""Parametric 3D body and vectorised forward kinematics.

World: Y up, floor at y=0. A body has a heading (yaw) in the XZ plane. Angles of limbs are given in
the body's *sagittal world convention*: flexion 0 = pointing straight down, +90 = forward
(heading direction), 180 = up, -90 = backward. The whole skeleton can be pitched (pitch > 0 leans
forward, pitch = 90 is a face-down plank, pitch = -90 lies on the back) and rolled.

Body frame: X = person's left, Y = up (along spine), Z = forward (facing).
"""
import numpy as np

J = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
     "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
     "right_knee", "left_ankle", "right_ankle"]
# per-joint "flesh radius" (m) between the joint and the floor when the body part rests on it
RADIUS = np.array([0.10, 0.10, 0.10, 0.10, 0.10, 0.07, 0.07, 0.05, 0.05, 0.03, 0.03, 0.10, 0.10,
                   0.05, 0.05, 0.06, 0.06])
LR_SWAP = [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]

SIDES = ("L", "R")
LIMB_KEYS = ["hip_flex", "hip_abd", "knee", "sh_flex", "sh_abd", "elbow", "ev_fwd", "ev_med", "ev_up"]
GLOBAL_KEYS = ["x", "z", "yaw", "pitch", "roll", "jump", "head_pitch", "head_yaw"]


def random_body(rng):
    H = rng.uniform(1.45, 1.98)
    j = lambda: rng.uniform(0.92, 1.08)
    return dict(
        H=H,
        torso=0.30 * H * j(), hip_half=0.078 * H * j(), sh_half=0.115 * H * j(),
        upper=0.172 * H * j(), fore=0.155 * H * j(), thigh=0.243 * H * j(), shin=0.250 * H * j(),
        neck=0.105 * H * j(), nose_fwd=0.055 * H * j(),
        eye_up=0.022 * H, eye_lat=0.030 * H * j(), eye_back=0.012 * H,
        ear_up=0.010 * H, ear_lat=0.072 * H * j(), ear_back=0.085 * H * j(),
    )


def blank(T):
    p = {k: np.zeros(T) for k in GLOBAL_KEYS}
    for s in SIDES:
        for k in LIMB_KEYS:
            p[s + k] = np.zeros(T)
        p[s + "ev_fwd"][:] = 1.0
    p["anchor"] = "floor"
    p["bar"] = 2.2
    p["lift"] = np.zeros(T)   # extra floor clearance (bench, chair)
    return p


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def _dir(flex, abd, side):
    # flex/abd in radians, body frame. side=+1 left, -1 right
    return np.stack([side * np.sin(abd), -np.cos(abd) * np.cos(flex), np.cos(abd) * np.sin(flex)], -1)


def _bend(d, v, ang):
    """rotate unit vectors d (T,3) by ang toward v (T,3) (component of v orthogonal to d)."""
    vp = v - (v * d).sum(-1, keepdims=True) * d
    n = np.linalg.norm(vp, axis=-1, keepdims=True)
    fallback = np.cross(d, np.array([1.0, 0, 0]))
    fallback /= np.maximum(np.linalg.norm(fallback, axis=-1, keepdims=True), 1e-6)
    vp = np.where(n > 1e-4, vp / np.maximum(n, 1e-9), fallback)
    return d * np.cos(ang)[:, None] + vp * np.sin(ang)[:, None]


def fk(p, b):
    """returns world joints (T,17,3)."""
    T = len(p["x"])
    deg = np.pi / 180
    pitch = p["pitch"] * deg
    R = _ry(p["yaw"] * deg) @ _rx(pitch) @ _rz(p["roll"] * deg)
    out = np.zeros((T, 17, 3))
    up = np.array([0.0, 1, 0])
    for side, sgn, (ish, iel, iwr, ihp, ikn, ian) in (("L", 1, (5, 7, 9, 11, 13, 15)),
                                                       ("R", -1, (6, 8, 10, 12, 14, 16))):
        g = lambda k: p[side + k]
        hip = np.array([sgn * b["hip_half"], 0, 0])
        sh = np.array([sgn * b["sh_half"], b["torso"], 0])
        # legs: world sagittal flexion -> body flexion adds pitch
        dth = _dir(g("hip_flex") * deg + pitch, g("hip_abd") * deg, sgn)
        # the knee bends in the leg's sagittal plane: shin flexion = thigh flexion - knee angle
        dsh = _dir((g("hip_flex") - g("knee")) * deg + pitch, g("hip_abd") * deg, sgn)
        knee = hip + b["thigh"] * dth
        ank = knee + b["shin"] * dsh
        dua = _dir(g("sh_flex") * deg + pitch, g("sh_abd") * deg, sgn)
        v = np.stack([np.zeros(T) - sgn * g("ev_med"), g("ev_up"), g("ev_fwd")], -1)
        dfa = _bend(dua, v, g("elbow") * deg)
        elb = sh + b["upper"] * dua
        wr = elb + b["fore"] * dfa
        out[:, ish] = sh
        out[:, iel] = elb
        out[:, iwr] = wr
        out[:, ihp] = hip
        out[:, ikn] = knee
        out[:, ian] = ank
    # head in a head frame at the neck (shoulder centre)
    Rh = _ry(p["head_yaw"] * deg) @ _rx(p["head_pitch"] * deg)
    neck = np.array([0, b["torso"], 0.0])
    nose = np.array([0, b["neck"], b["nose_fwd"]])
    pts = [nose,
           nose + [b["eye_lat"], b["eye_up"], -b["eye_back"]], nose + [-b["eye_lat"], b["eye_up"], -b["eye_back"]],
           nose + [b["ear_lat"], b["ear_up"], -b["ear_back"]], nose + [-b["ear_lat"], b["ear_up"], -b["ear_back"]]]
    for i, q in enumerate(pts):
        out[:, i] = neck + (Rh @ np.asarray(q))
    w = np.einsum("tij,tkj->tki", R, out)
    # place on the floor / hang from the bar
    if p["anchor"] == "hands":
        yoff = p["bar"] - np.maximum(w[:, 9, 1], w[:, 10, 1])
    else:
        yoff = -(w[:, :, 1] - RADIUS[None]).min(1) + p["lift"]
    w[:, :, 0] += p["x"][:, None]
    w[:, :, 2] += p["z"][:, None]
    w[:, :, 1] += (yoff + p["jump"])[:, None]
    return w
