"""Animated action cycles. Each generator returns (params, active) for T frames at fps.

params: see body.py (angles in degrees, world-sagittal convention). active: bool per frame, True
while the labelled action is actually being performed (False in idle lead-in/out).
"""
import contextlib

import numpy as np
from .body import blank, SIDES

LABELS = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups", "other"]

# Opt-in record of the repetition phase (training/counter/sessions.py): None = off (the default, so the
# classifier's data are untouched). Set it to a list and every phase_track call appends its phase
# array (rep index + fraction, per frame) and burpees appends ("keys", cycle start times); nothing
# here draws from the RNG or changes what a generator returns.
PHASE_LOG = None

# Opt-in overrides for the robustness suite (posegen/suite.py): empty = off (the default; the
# classifier's training data are untouched). Keys: "rate" (reps/s for every phase_track),
# "burpee_speed", "jj_style", "walk_run", "walk_in_place". Each override replaces a value *after*
# it has been drawn, so the RNG stream is the same with or without them.
SUITE = {}

# Variants (r34; on in train.py by default since r39, issue 41; off here, so the data of r26..r33 stay
# bit for bit), by name: "star" (star jumps, and jacks mixed with star jumps, as `jumping_jacks`),
# "slow_step" (step jacks down to 3 s a repetition), "lunge_arms" (lunges with the arms forward or
# overhead), and in dataset.make_clip "bursts" (sets in short bursts between standing or talking) and
# "knee_cut" (the frame's bottom edge at the knees). See variants().
VARIANTS = frozenset()
VARIANT_NAMES = ("star", "slow_step", "lunge_arms", "bursts", "knee_cut")


@contextlib.contextmanager
def variants(names=VARIANT_NAMES):
    """Within the block the generators also draw the named r34 variants (VARIANTS above)."""
    global VARIANTS
    unknown = set(names) - set(VARIANT_NAMES)
    if unknown:
        raise ValueError(f"unknown generator variants {sorted(unknown)}; known: {', '.join(VARIANT_NAMES)}")
    saved, VARIANTS = VARIANTS, frozenset(names)
    try:
        yield
    finally:
        VARIANTS = saved


# ----------------------------------------------------------------------------- helpers
def smooth_noise(rng, T, fps, scale, hz=0.5):
    """band-limited noise, std ~ scale, content below ~hz."""
    n = max(4, int(T / fps * hz * 2) + 4)
    knots = rng.normal(0, scale, n)
    x = np.linspace(0, n - 3, T) + rng.uniform(0, 1)
    i = np.clip(np.floor(x).astype(int), 0, n - 2)
    f = x - i
    f = f * f * (3 - 2 * f)
    return knots[i] * (1 - f) + knots[i + 1] * f


def phase_track(rng, T, fps, rate, pause_prob=0.15, pause=(0.2, 1.2), jitter=0.12):
    """continuous phase (rep index + fraction) with tempo variation and pauses at phase 0."""
    rate = SUITE.get("rate", rate)
    t = 0.0
    marks = [(0.0, 0.0)]  # (time, phase)
    k = 0
    dur_total = T / fps + 2
    while t < dur_total:
        if rng.random() < pause_prob:
            t += rng.uniform(*pause)
            marks.append((t, float(k)))
        d = 1.0 / rate * rng.uniform(1 - jitter, 1 + jitter)
        t += d
        k += 1
        marks.append((t, float(k)))
    mt, mp = np.array(marks).T
    ts = np.arange(T) / fps + rng.uniform(0, 1.0 / rate)
    ph = np.interp(ts, mt, mp)
    if PHASE_LOG is not None:
        PHASE_LOG.append(ph)
    return ph


def cyc(ph):
    """0 -> 1 -> 0 over one rep, smooth."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * ph)


def seg(ph, a, b):
    """0 before a, 1 after b, smooth in between (ph = fraction within rep)."""
    x = np.clip((ph - a) / max(b - a, 1e-6), 0, 1)
    return x * x * (3 - 2 * x)


def sym(p, key, v):
    p["L" + key] = np.broadcast_to(np.asarray(v, float), p["x"].shape).copy()
    p["R" + key] = p["L" + key].copy()


def arms_style(p, rng, style=None, T=None, fps=15):
    """static-ish arm pose for legs-only actions."""
    style = style or rng.choice(["hang", "hips", "chest", "head", "forward", "cross", "swing"])
    T = len(p["x"])
    for s in SIDES:
        p[s + "ev_fwd"][:] = 1.0
        p[s + "ev_med"][:] = 0.0
        p[s + "ev_up"][:] = 0.0
    if style == "hang":
        sym(p, "sh_flex", rng.uniform(-5, 15)); sym(p, "sh_abd", rng.uniform(3, 15)); sym(p, "elbow", rng.uniform(5, 30))
    elif style == "hips":
        sym(p, "sh_flex", rng.uniform(-25, -5)); sym(p, "sh_abd", rng.uniform(30, 50)); sym(p, "elbow", rng.uniform(80, 110))
        sym(p, "ev_med", 1.0); sym(p, "ev_fwd", 0.6)
    elif style == "chest":
        sym(p, "sh_flex", rng.uniform(30, 60)); sym(p, "sh_abd", rng.uniform(10, 30)); sym(p, "elbow", rng.uniform(100, 140))
        sym(p, "ev_med", 1.0); sym(p, "ev_up", 0.5)
    elif style == "head":
        sym(p, "sh_flex", rng.uniform(0, 30)); sym(p, "sh_abd", rng.uniform(95, 125)); sym(p, "elbow", rng.uniform(120, 150))
        sym(p, "ev_med", 1.0); sym(p, "ev_up", 0.3); sym(p, "ev_fwd", 0.0)
    elif style == "forward":
        sym(p, "sh_flex", rng.uniform(75, 95)); sym(p, "sh_abd", rng.uniform(0, 15)); sym(p, "elbow", rng.uniform(0, 20))
    elif style == "cross":
        sym(p, "sh_flex", rng.uniform(20, 45)); sym(p, "sh_abd", rng.uniform(0, 10)); sym(p, "elbow", rng.uniform(110, 140))
        sym(p, "ev_med", 1.0); sym(p, "ev_fwd", 0.3); sym(p, "ev_up", 0.4)
    else:  # swing: natural loose arms with slow drift
        sym(p, "sh_flex", rng.uniform(-5, 20)); sym(p, "sh_abd", rng.uniform(5, 20)); sym(p, "elbow", rng.uniform(10, 50))
    for s in SIDES:
        for k, sc in (("sh_flex", 4), ("sh_abd", 3), ("elbow", 5)):
            p[s + k] = p[s + k] + smooth_noise(rng, T, fps, sc, 0.7)
    return style


def standing(p, rng, T, fps, sway=1.0):
    sym(p, "hip_abd", rng.uniform(2, 10))
    sym(p, "knee", rng.uniform(0, 8))
    p["Lhip_flex"] = smooth_noise(rng, T, fps, 2 * sway, 0.4) + rng.uniform(-3, 3)
    p["Rhip_flex"] = smooth_noise(rng, T, fps, 2 * sway, 0.4) + rng.uniform(-3, 3)
    p["pitch"] = p["pitch"] + smooth_noise(rng, T, fps, 2 * sway, 0.3) + rng.uniform(-3, 6)
    p["roll"] = p["roll"] + smooth_noise(rng, T, fps, 1.5 * sway, 0.3)
    p["x"] = p["x"] + smooth_noise(rng, T, fps, 0.02 * sway, 0.3)
    p["head_pitch"] = smooth_noise(rng, T, fps, 6, 0.4) + rng.uniform(-10, 10)
    p["head_yaw"] = smooth_noise(rng, T, fps, 10, 0.4)


def amp_track(rng, ph, lo=0.8, hi=1.1):
    """per-rep amplitude multiplier."""
    n = int(ph.max()) + 3
    a = rng.uniform(lo, hi, n)
    i = np.clip(np.floor(ph).astype(int), 0, n - 1)
    return a[i]


# ----------------------------------------------------------------------------- targets
def star_jumps(rng, T, fps, b):
    """star jumps: a crouch with the hands low, an explosive jump into an X (arms and legs spread
    wide in the air), landing back in the crouch. Labelled `jumping_jacks` (training/README.md:
    the same open-close of arms and legs, counted the same; a set often mixes the two)."""
    p = blank(T)
    standing(p, rng, T, fps, 0.5)
    ph = phase_track(rng, T, fps, rng.uniform(0.5, 1.0), pause_prob=0.1)
    f = ph % 1
    air = np.sin(np.pi * np.clip((f - 0.3) / 0.45, 0, 1))        # in the air for the middle of the rep
    crouch = np.clip(1 - seg(f, 0.15, 0.3) + seg(f, 0.8, 0.95), 0, 1) * rng.uniform(0.6, 1.0)
    sym(p, "hip_flex", crouch * rng.uniform(50, 80))
    sym(p, "knee", crouch * rng.uniform(70, 100) + 5)
    p["pitch"] = p["pitch"] + crouch * rng.uniform(15, 30)
    sym(p, "hip_abd", 4 + air * rng.uniform(25, 40))
    sym(p, "sh_abd", 10 + air * rng.uniform(110, 150))
    sym(p, "sh_flex", crouch * rng.uniform(10, 40) + air * rng.uniform(-5, 20))
    sym(p, "elbow", rng.uniform(0, 25) + crouch * 15)
    sym(p, "ev_up", 1.0); sym(p, "ev_med", 0.5)
    p["jump"] = air * rng.uniform(0.15, 0.35)
    return p


def jacks_and_star_jumps(rng, T, fps, b):
    """one set that switches between jumping jacks and star jumps every 2-4 s."""
    p = jumping_jacks(rng, T, fps, b)[0]
    q = star_jumps(rng, T, fps, b)
    sw = np.zeros(T)
    t = rng.uniform(1.0, 2.5) * fps
    while t < T:
        sw[int(t):] = 1 - sw[int(t)]
        t += rng.uniform(2.0, 4.0) * fps
    al = np.clip(np.convolve(sw, np.ones(5) / 5, "same"), 0, 1)
    out = {}
    for k in p:
        out[k] = p[k] if k in ("anchor", "bar", "tag") else p[k] * (1 - al) + q[k] * al
    return out


def jumping_jacks(rng, T, fps, b):
    if "star" in VARIANTS and not SUITE:
        r = rng.random()
        if r < 0.15:
            return star_jumps(rng, T, fps, b), np.ones(T, bool)
        if r < 0.25:
            return jacks_and_star_jumps(rng, T, fps, b), np.ones(T, bool)
    p = blank(T)
    standing(p, rng, T, fps, 0.5)
    rate = rng.uniform(0.7, 2.0)
    ph = phase_track(rng, T, fps, rate, pause_prob=0.05)
    f = ph % 1
    amp = amp_track(rng, ph, 0.75, 1.05)
    o = cyc(f) * amp
    style = SUITE.get("jj_style", rng.choice(["full", "full", "full", "half", "step"]))
    if "slow_step" in VARIANTS and style == "step" and rng.random() < 0.5:  # slow step jacks: 1.4-3 s a repetition
        ph = phase_track(rng, T, fps, rng.uniform(0.33, 0.7), pause_prob=0.05)
        f = ph % 1
        amp = amp_track(rng, ph, 0.75, 1.05)
        o = cyc(f) * amp
    arm_top = rng.uniform(140, 178) if style != "half" else rng.uniform(75, 115)
    a0 = rng.uniform(3, 18)
    sym(p, "sh_abd", a0 + o * (arm_top - a0))
    sym(p, "sh_flex", rng.uniform(-10, 25) * (0.3 + o))
    sym(p, "elbow", rng.uniform(5, 45) * (0.4 + 0.6 * rng.random()) + 10 * o)
    sym(p, "ev_up", 1.0); sym(p, "ev_med", 0.5)
    leg = rng.uniform(9, 24)
    if style == "step":
        lead = np.where((np.floor(ph) % 2) == 0, 1.0, 0.0)
        p["Lhip_abd"] = 3 + o * leg * lead
        p["Rhip_abd"] = 3 + o * leg * (1 - lead)
    else:
        sym(p, "hip_abd", 3 + o * leg)
        h = rng.uniform(0.03, 0.14)
        p["jump"] = h * np.abs(np.sin(2 * np.pi * f)) ** 1.5
        sym(p, "knee", 5 + rng.uniform(5, 25) * (1 - np.abs(np.sin(2 * np.pi * f))) * (0.5 + 0.5 * o))
        sym(p, "hip_flex", p["Lknee"] * 0.4)
    return p, np.ones(T, bool)


def squats(rng, T, fps, b):
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    ph = phase_track(rng, T, fps, rng.uniform(0.22, 1.1), pause_prob=0.2, pause=(0.2, 1.0))
    f = ph % 1
    amp = amp_track(rng, ph, 0.75, 1.05)
    if rng.random() < 0.5:
        shape = rng.uniform(0.6, 1.6)
        d = np.minimum(cyc(f) ** shape * amp * rng.uniform(0.8, 1.2), 1.0)
    else:  # heavy/paused squats: a controlled descent, a hold at the bottom, a slower grind up
        a = rng.uniform(0.2, 0.45)
        h = rng.uniform(0.05, 0.3) if rng.random() < 0.5 else 0.0
        d = np.minimum(seg(f, 0.0, a) * (1 - seg(f, a + h, 1.0)) * amp * rng.uniform(0.85, 1.15), 1.0)
    thigh = rng.uniform(85, 125)
    sym(p, "hip_flex", d * thigh + rng.uniform(-3, 3))
    sym(p, "knee", d * (thigh + rng.uniform(10, 35)))
    p["pitch"] = p["pitch"] + d * rng.uniform(12, 45)
    sym(p, "hip_abd", rng.uniform(5, 28) + d * rng.uniform(0, 8))
    style = arms_style(p, rng, rng.choice(["hang", "hips", "chest", "head", "forward", "cross", "raise", "overhead",
                                           "barbell", "barbell", "barbell"]), T, fps)
    if style in ("barbell", "front_rack"):
        p["tag"] = "barbell"
    if style == "barbell":  # back squat: hands on a bar behind the neck
        sym(p, "sh_flex", rng.uniform(-45, -10) + d * rng.uniform(0, 30)); sym(p, "sh_abd", rng.uniform(45, 75))
        sym(p, "elbow", rng.uniform(100, 150)); sym(p, "ev_up", 1.0); sym(p, "ev_fwd", 0.0); sym(p, "ev_med", 0.4)
    elif style == "front_rack":  # front squat / goblet: elbows forward, hands at the shoulders
        sym(p, "sh_flex", rng.uniform(60, 95)); sym(p, "sh_abd", rng.uniform(10, 35)); sym(p, "elbow", rng.uniform(110, 150))
        sym(p, "ev_up", 1.0); sym(p, "ev_fwd", 0.0); sym(p, "ev_med", 0.5)
    elif style == "raise":
        sym(p, "sh_flex", 10 + d * rng.uniform(60, 90))
        sym(p, "sh_abd", rng.uniform(0, 15)); sym(p, "elbow", rng.uniform(0, 25))
    elif style == "overhead":
        sym(p, "sh_flex", rng.uniform(150, 175)); sym(p, "sh_abd", rng.uniform(5, 25)); sym(p, "elbow", rng.uniform(0, 20))
    elif style == "hang":
        sym(p, "sh_flex", p["Lsh_flex"] + d * rng.uniform(0, 30))
    return p, np.ones(T, bool)


def lunges(rng, T, fps, b):
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    variant = rng.choice(["forward", "backward", "walking", "split"])
    rate = rng.uniform(0.25, 0.9) if variant != "split" else rng.uniform(0.35, 1.0)
    ph = phase_track(rng, T, fps, rate, pause_prob=0.15, pause=(0.2, 0.8))
    f = ph % 1
    amp = amp_track(rng, ph, 0.8, 1.05)
    rep = np.floor(ph).astype(int)
    if variant == "split":
        g = np.ones(T)
        d = cyc(f) * amp
        lead_left = np.full(T, rng.random() < 0.5)
    else:
        g = seg(f, 0.0, 0.22) * (1 - seg(f, 0.78, 1.0))
        d = np.sin(np.pi * np.clip((f - 0.15) / 0.7, 0, 1)) ** 1.2 * amp
        lead_left = (rep % 2 == 0) ^ (rng.random() < 0.5)
    F, K, B, KB = rng.uniform(70, 95), rng.uniform(80, 105), rng.uniform(5, 25), rng.uniform(70, 110)
    step = np.sin(np.pi * np.clip(f / 0.25, 0, 1)) * (variant != "split")
    front_flex = g * 25 + d * (F - 25) + step * 20
    front_knee = g * 10 + d * (K - 10) + step * 25
    back_flex = -g * 12 - d * (B - 12)
    back_knee = g * 10 + d * (KB - 10)
    if variant == "backward":  # front leg stays, the back leg steps back: same split geometry
        front_flex = g * 15 + d * (F - 15)
        front_knee = g * 5 + d * (K - 5)
        back_flex = -g * 20 - d * (B - 20) - step * 10
        back_knee = g * 10 + d * (KB - 10) + step * 20
    p["Lhip_flex"] = np.where(lead_left, front_flex, back_flex)
    p["Rhip_flex"] = np.where(lead_left, back_flex, front_flex)
    p["Lknee"] = np.where(lead_left, front_knee, back_knee)
    p["Rknee"] = np.where(lead_left, back_knee, front_knee)
    sym(p, "hip_abd", rng.uniform(2, 8))
    p["pitch"] = p["pitch"] + d * rng.uniform(-5, 15)
    arms = arms_style(p, rng, rng.choice(["hang", "hips", "chest", "head", "cross", "swing"]), T, fps)
    if "lunge_arms" in VARIANTS and rng.random() < 0.3:  # arms held forward or overhead (r34)
        if rng.random() < 0.5:
            sym(p, "sh_flex", rng.uniform(75, 95)); sym(p, "sh_abd", rng.uniform(0, 15)); sym(p, "elbow", rng.uniform(0, 20))
        else:
            sym(p, "sh_flex", rng.uniform(150, 175)); sym(p, "sh_abd", rng.uniform(5, 25)); sym(p, "elbow", rng.uniform(0, 20))
        for s in SIDES:
            p[s + "ev_fwd"][:] = 1.0; p[s + "ev_med"][:] = 0.0; p[s + "ev_up"][:] = 0.0
            p[s + "sh_flex"] = p[s + "sh_flex"] + smooth_noise(rng, T, fps, 4, 0.7)
    if variant == "walking":
        p["z"] = p["z"] + (ph * rng.uniform(0.5, 0.9))
    return p, np.ones(T, bool)


def _plank_pitch(b, arm_drop, knees=False):
    L = b["torso"] + (b["thigh"] if knees else b["thigh"] + b["shin"])
    return 90 - np.degrees(np.arcsin(np.clip(arm_drop / L, 0.05, 0.95)))


def push_ups(rng, T, fps, b):
    p = blank(T)
    knees = rng.random() < 0.3
    ph = phase_track(rng, T, fps, rng.uniform(0.35, 1.3), pause_prob=0.15, pause=(0.2, 0.9))
    f = ph % 1
    amp = amp_track(rng, ph, 0.7, 1.05)
    d = cyc(f) ** rng.uniform(0.7, 1.3) * amp * rng.uniform(0.6, 1.0)
    elbow = d * rng.uniform(80, 115)
    ua = -d * rng.uniform(20, 45) + rng.uniform(-5, 15)  # world flexion of upper arm
    drop = b["upper"] * np.cos(np.radians(ua)) + b["fore"] * np.cos(np.radians(ua + elbow * 0.9 - 0))
    drop = np.clip(b["upper"] * np.cos(np.radians(ua)) + b["fore"] * rng.uniform(0.75, 0.95)
                   - d * b["upper"] * rng.uniform(0.6, 1.1), 0.08, None)
    p["pitch"] = _plank_pitch(b, drop, knees) + rng.uniform(-4, 4) + smooth_noise(rng, T, fps, 2, 0.5)
    sag = rng.uniform(-10, 15)  # hip sag(+)/pike(-)
    sym(p, "hip_flex", -p["pitch"] + sag * 0.5)
    sym(p, "sh_flex", ua)
    sym(p, "sh_abd", rng.uniform(10, 35) + d * rng.uniform(0, 30))
    sym(p, "elbow", elbow)
    sym(p, "ev_up", 1.0); sym(p, "ev_fwd", 0.2); sym(p, "ev_med", rng.uniform(-0.5, 0.5))
    sym(p, "hip_abd", rng.uniform(2, 10))
    if knees:
        sym(p, "knee", rng.uniform(70, 130))
    else:
        sym(p, "knee", rng.uniform(0, 10))
    p["head_pitch"] = rng.uniform(-30, 20) + smooth_noise(rng, T, fps, 5)
    return p, np.ones(T, bool)


def _interp_keys(keys, times, T, fps, t0):
    """keys: list of param dicts (arrays length 1 or scalars); times: key times (s)."""
    ts = t0 + np.arange(T) / fps
    p = blank(T)
    for k in p:
        if k in ("anchor", "bar"):
            continue
        vals = np.array([float(np.asarray(kk[k]).ravel()[0]) for kk in keys])
        p[k] = np.interp(ts, times, vals)
    return p


def _keypose(b, rng, kind, side_back=None):
    q = {k: (v[0] if hasattr(v, "__len__") and not isinstance(v, str) else v) for k, v in blank(1).items()}
    def s2(k, v):
        q["L" + k] = v; q["R" + k] = v
    s2("hip_abd", rng.uniform(3, 10)); s2("sh_abd", rng.uniform(5, 15)); s2("elbow", rng.uniform(5, 25))
    if kind == "stand":
        q["pitch"] = rng.uniform(0, 8); s2("sh_flex", rng.uniform(0, 20))
    elif kind == "jump":
        q["pitch"] = rng.uniform(-3, 5); s2("sh_flex", rng.uniform(150, 178)); q["jump"] = rng.uniform(0.08, 0.3)
        s2("elbow", rng.uniform(0, 20))
    elif kind == "squat":  # crouch, hands on the floor
        q["pitch"] = rng.uniform(35, 65); s2("hip_flex", rng.uniform(95, 125)); s2("knee", rng.uniform(110, 140))
        s2("sh_flex", rng.uniform(0, 25)); s2("elbow", rng.uniform(0, 25))
    elif kind in ("plank", "low"):
        dd = 1.0 if kind == "low" else 0.0
        drop = b["upper"] + b["fore"] * 0.95 - dd * b["upper"] * rng.uniform(0.5, 0.9)
        q["pitch"] = _plank_pitch(b, drop) + rng.uniform(-3, 3)
        s2("hip_flex", -q["pitch"] + rng.uniform(-5, 8)); s2("knee", rng.uniform(0, 10))
        s2("sh_flex", rng.uniform(-5, 15) - dd * 30); s2("elbow", dd * rng.uniform(80, 110))
        s2("sh_abd", rng.uniform(10, 30) + dd * 15)
        q["Lev_up"] = q["Rev_up"] = 1.0; q["Lev_fwd"] = q["Rev_fwd"] = 0.2
    elif kind == "floor":  # chest on the floor
        q["pitch"] = 88; s2("hip_flex", -88); s2("sh_flex", -40); s2("elbow", 120); s2("sh_abd", 40)
        q["Lev_up"] = q["Rev_up"] = 1.0
    if side_back is not None:  # one leg back (step-back transition)
        pl = q["pitch"] if kind != "squat" else 60
        q[side_back + "hip_flex"] = -pl * rng.uniform(0.7, 1.0)
        q[side_back + "knee"] = rng.uniform(0, 20)
    return q


def burpees(rng, T, fps, b):
    step_back = rng.random() < 0.4
    pushup = rng.random() < 0.5
    jump = rng.random() < (0.35 if step_back else 0.75)
    chest_floor = (not pushup) and rng.random() < 0.25
    keys, times = [], []
    t = -rng.uniform(0, 4)
    speed = SUITE.get("burpee_speed", rng.uniform(0.65, 1.5))
    first = True
    starts = []
    while t < T / fps + 2:
        starts.append(len(times))
        seq = [("stand", None, rng.uniform(0.1, 0.6) if not first else 0.3), ("squat", None, 0.45)]
        sb = rng.choice(["L", "R"])
        if step_back:
            seq += [("squat", sb, 0.45), ("plank", None, 0.45)]
        else:
            seq += [("plank", None, 0.35)]
        if pushup:
            seq += [("low", None, 0.45), ("plank", None, 0.45)]
        elif chest_floor:
            seq += [("floor", None, 0.5), ("plank", None, 0.5)]
        else:
            seq += [("plank", None, rng.uniform(0.05, 0.3))]
        if step_back:
            seq += [("squat", "R" if sb == "L" else "L", 0.45)]
        seq += [("squat", None, 0.35 if not step_back else 0.45)]
        if jump:
            seq += [("jump", None, 0.45), ("stand", None, 0.3)]
        else:
            seq += [("stand", None, 0.55)]
        for kind, sbk, dur in seq:
            t += dur * speed * rng.uniform(0.85, 1.15)
            keys.append(_keypose(b, rng, kind, sbk)); times.append(t)
        first = False
    p = _interp_keys(keys, np.array(times), T, fps, 0.0)
    if PHASE_LOG is not None:  # a cycle starts at its first key (standing)
        PHASE_LOG.append(("keys", [times[i] for i in starts if i < len(times)]))
    p["head_pitch"] = p["head_pitch"] + smooth_noise(rng, T, fps, 6)
    return p, np.ones(T, bool)


# ----------------------------------------------------------------------------- other
def o_idle(rng, T, fps, b):
    p = blank(T)
    standing(p, rng, T, fps, rng.uniform(0.5, 3))
    arms_style(p, rng, None, T, fps)
    return p


def o_talk(rng, T, fps, b):
    p = o_idle(rng, T, fps, b)
    for s in "LR":
        act = rng.random() < 0.8
        p[s + "sh_flex"] = p[s + "sh_flex"] + act * np.abs(smooth_noise(rng, T, fps, 30, rng.uniform(0.5, 1.5)))
        p[s + "sh_abd"] = p[s + "sh_abd"] + act * np.abs(smooth_noise(rng, T, fps, 15, 1.0))
        p[s + "elbow"] = np.clip(p[s + "elbow"] + act * smooth_noise(rng, T, fps, 40, 1.2) + 40 * act, 0, 150)
    p["yaw"] = p["yaw"] + smooth_noise(rng, T, fps, 15, 0.3)
    return p


def o_walk(rng, T, fps, b):
    p = blank(T)
    run = SUITE.get("walk_run", rng.random() < 0.25)
    in_place = SUITE.get("walk_in_place", rng.random() < 0.3)
    cad = rng.uniform(0.8, 1.1) if not run else rng.uniform(1.3, 1.6)  # strides/s
    ph = np.arange(T) / fps * cad + rng.uniform(0, 1)
    w = 2 * np.pi * ph
    A = rng.uniform(15, 28) if not run else rng.uniform(25, 40)
    p["Lhip_flex"] = A * np.sin(w) + (rng.uniform(20, 50) * np.clip(np.sin(w), 0, 1) if in_place else 0)
    p["Rhip_flex"] = -A * np.sin(w) + (rng.uniform(20, 50) * np.clip(-np.sin(w), 0, 1) if in_place else 0)
    kn = rng.uniform(40, 65) if not run else rng.uniform(70, 100)
    p["Lknee"] = 5 + kn * np.clip(np.sin(w - 1.2), 0, 1) ** 1.5
    p["Rknee"] = 5 + kn * np.clip(np.sin(w - 1.2 + np.pi), 0, 1) ** 1.5
    sym(p, "hip_abd", rng.uniform(2, 7))
    arms = rng.uniform(10, 30)
    p["Lsh_flex"] = -arms * np.sin(w) + 5
    p["Rsh_flex"] = arms * np.sin(w) + 5
    sym(p, "sh_abd", rng.uniform(5, 15)); sym(p, "elbow", rng.uniform(10, 30) if not run else rng.uniform(70, 100))
    p["jump"] = (rng.uniform(0.02, 0.08) if run else 0.0) * np.abs(np.sin(w))
    p["pitch"] = np.full(T, rng.uniform(0, 10))
    heading = rng.uniform(-180, 180)
    turn = smooth_noise(rng, T, fps, 30, 0.2) * (rng.random() < 0.4)
    p["yaw"] = heading + turn
    if not in_place:
        v = (rng.uniform(0.9, 1.5) if not run else rng.uniform(2.0, 3.0)) / fps
        yr = np.radians(p["yaw"])
        p["x"] = np.cumsum(v * np.sin(yr)); p["z"] = np.cumsum(v * np.cos(yr))
        p["x"] -= p["x"].mean(); p["z"] -= p["z"].mean()
    return p


def o_stretch(rng, T, fps, b):
    p = o_idle(rng, T, fps, b)
    kind = rng.choice(["reach", "side", "fold", "quad", "arm_across", "lunge_hold", "neck", "hamstring_sit"])
    s = seg((np.arange(T) / fps) / rng.uniform(1, 3) - rng.uniform(-0.5, 1.0), 0, 1)
    if rng.random() < 0.5:
        s = np.clip(s - seg((np.arange(T) / fps) / rng.uniform(2, 4), 1.5, 2.5), 0, 1)
    if kind == "reach":
        sym(p, "sh_flex", 10 + s * rng.uniform(140, 170)); sym(p, "elbow", rng.uniform(0, 20))
    elif kind == "side":
        p["roll"] = p["roll"] + s * rng.choice([-1, 1]) * rng.uniform(15, 35)
        p["Lsh_abd"] = 10 + s * rng.uniform(120, 170); p["Lelbow"] = p["Lelbow"] * 0 + rng.uniform(0, 40)
    elif kind == "fold":
        p["pitch"] = p["pitch"] + s * rng.uniform(60, 110)
        sym(p, "hip_flex", -p["pitch"] * 0 + s * rng.uniform(0, 10)); sym(p, "knee", s * rng.uniform(0, 25))
        sym(p, "sh_flex", s * rng.uniform(0, 20) + 5); sym(p, "elbow", rng.uniform(0, 20))
    elif kind == "quad":
        sd = rng.choice(["L", "R"])
        p[sd + "knee"] = s * rng.uniform(130, 160); p[sd + "hip_flex"] = -s * rng.uniform(0, 15)
        p[sd + "sh_flex"] = -s * rng.uniform(20, 40); p[sd + "elbow"] = s * rng.uniform(40, 90)
    elif kind == "arm_across":
        sd = rng.choice(["L", "R"])
        p[sd + "sh_flex"] = s * 90; p[sd + "sh_abd"] = -s * 30 + 5; p[sd + "elbow"] = rng.uniform(0, 20) + 0 * s
    elif kind == "lunge_hold":
        sym(p, "hip_flex", 0); p["Lhip_flex"] = s * rng.uniform(50, 85); p["Lknee"] = s * rng.uniform(50, 90)
        p["Rhip_flex"] = -s * rng.uniform(10, 30); p["Rknee"] = s * rng.uniform(10, 80)
    elif kind == "neck":
        p["head_pitch"] = p["head_pitch"] + smooth_noise(rng, T, fps, 25, 0.5); p["head_yaw"] = smooth_noise(rng, T, fps, 40, 0.5)
    else:
        p["pitch"] = np.full(T, -rng.uniform(0, 30)) + s * rng.uniform(30, 70)
        sym(p, "hip_flex", 90 + rng.uniform(-5, 5) + 0 * s); sym(p, "knee", rng.uniform(0, 20))
        sym(p, "sh_flex", 60 + s * 30); sym(p, "elbow", rng.uniform(0, 20))
    return p


def o_random(rng, T, fps, b):
    p = o_idle(rng, T, fps, b)
    sp = rng.uniform(0.4, 2.0)
    for s in "LR":
        p[s + "sh_flex"] = p[s + "sh_flex"] + smooth_noise(rng, T, fps, 50, sp)
        p[s + "sh_abd"] = np.abs(p[s + "sh_abd"] + smooth_noise(rng, T, fps, 40, sp))
        p[s + "elbow"] = np.clip(p[s + "elbow"] + np.abs(smooth_noise(rng, T, fps, 50, sp)), 0, 150)
        p[s + "hip_flex"] = p[s + "hip_flex"] + smooth_noise(rng, T, fps, 20, sp)
        p[s + "hip_abd"] = np.abs(p[s + "hip_abd"] + smooth_noise(rng, T, fps, 10, sp))
        p[s + "knee"] = np.clip(np.abs(smooth_noise(rng, T, fps, 30, sp)), 0, 140)
    p["pitch"] = p["pitch"] + smooth_noise(rng, T, fps, 20, sp * 0.5)
    p["yaw"] = p["yaw"] + smooth_noise(rng, T, fps, 40, sp * 0.3)
    p["roll"] = p["roll"] + smooth_noise(rng, T, fps, 8, sp * 0.5)
    return p


def o_jump_rope(rng, T, fps, b):
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    r = rng.uniform(1.6, 2.8)
    w = 2 * np.pi * (np.arange(T) / fps * r + rng.uniform(0, 1))
    alt = rng.random() < 0.3
    p["jump"] = rng.uniform(0.02, 0.09) * np.clip(np.sin(w), 0, 1)
    sym(p, "knee", 8 + rng.uniform(5, 20) * np.clip(-np.sin(w), 0, 1))
    if alt:
        p["Lknee"] = p["Lknee"] + 35 * np.clip(np.sin(w / 2), 0, 1); p["Lhip_flex"] = p["Lhip_flex"] + 20 * np.clip(np.sin(w / 2), 0, 1)
    sym(p, "hip_flex", p["Lhip_flex"] * 0 + 5)
    sym(p, "sh_abd", rng.uniform(15, 35) + 5 * np.sin(w)); sym(p, "sh_flex", rng.uniform(0, 20) + 8 * np.cos(w))
    sym(p, "elbow", rng.uniform(50, 90) + 10 * np.sin(w)); sym(p, "ev_fwd", 1.0)
    return p


def o_lying_core(rng, T, fps, b):
    """crunches / sit-ups / leg raises / bicycle crunch."""
    p = blank(T)
    kind = rng.choice(["situp", "crunch", "legraise", "v_up"])
    rate = rng.uniform(0.3, 1.0)
    ph = phase_track(rng, T, fps, rate, pause_prob=0.1)
    d = cyc(ph % 1) * amp_track(rng, ph)
    base = -90 + rng.uniform(-3, 3)
    top = {"situp": rng.uniform(45, 80), "crunch": rng.uniform(15, 35), "legraise": rng.uniform(0, 8), "v_up": rng.uniform(30, 50)}[kind]
    p["pitch"] = base + d * top
    if kind in ("legraise", "v_up"):
        sym(p, "hip_flex", 90 + d * rng.uniform(50, 80)); sym(p, "knee", rng.uniform(0, 30))
    else:
        sym(p, "hip_flex", rng.uniform(120, 150) + 0 * d); sym(p, "knee", rng.uniform(80, 120))
    arms_style(p, rng, rng.choice(["head", "cross", "forward"]), T, fps)
    if p["Lsh_flex"].mean() > 60:  # reaching forward
        sym(p, "sh_flex", p["pitch"] * 0 + 90 + rng.uniform(-10, 30))
    else:
        for s in "LR":
            p[s + "sh_flex"] = p[s + "sh_flex"] + p["pitch"] + 90  # keep arms with the torso
    p["yaw"] = np.full(T, rng.uniform(-180, 180))
    return p


def o_press(rng, T, fps, b):
    """overhead press, lateral / front raises, curls, triceps extension, standing or seated."""
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    kind = rng.choice(["overhead", "lateral", "front", "curl", "triceps", "upright_row", "punches"])
    rate = rng.uniform(0.3, 1.0) if kind != "punches" else rng.uniform(1.0, 2.0)
    ph = phase_track(rng, T, fps, rate, pause_prob=0.1)
    d = cyc(ph % 1) * amp_track(rng, ph)
    alt = rng.random() < 0.3
    dl, dr = d, d
    if alt or kind == "punches":
        d2 = cyc((ph + 0.5) % 1)
        dr = d2
    for s, dd in (("L", dl), ("R", dr)):
        if kind == "overhead":
            p[s + "sh_abd"] = 75 + dd * rng.uniform(80, 100); p[s + "sh_flex"] = np.full(T, rng.uniform(0, 25))
            p[s + "elbow"] = 95 * (1 - dd) + 5; p[s + "ev_up"][:] = 1.0; p[s + "ev_fwd"][:] = 0.2; p[s + "ev_med"][:] = 0.2
        elif kind == "lateral":
            p[s + "sh_abd"] = 10 + dd * rng.uniform(65, 90); p[s + "elbow"] = np.full(T, rng.uniform(5, 25))
        elif kind == "front":
            p[s + "sh_flex"] = 5 + dd * rng.uniform(70, 100); p[s + "sh_abd"] = np.full(T, 10.0); p[s + "elbow"] = np.full(T, 10.0)
        elif kind == "curl":
            p[s + "sh_abd"] = np.full(T, 10.0); p[s + "elbow"] = 10 + dd * rng.uniform(100, 135)
        elif kind == "triceps":
            p[s + "sh_flex"] = np.full(T, 165.0); p[s + "elbow"] = 20 + dd * 110; p[s + "ev_fwd"][:] = -1.0
        elif kind == "upright_row":
            p[s + "sh_abd"] = 10 + dd * 70; p[s + "elbow"] = dd * 110; p[s + "ev_up"][:] = 1.0; p[s + "ev_med"][:] = 1.0
        else:
            p[s + "sh_flex"] = 40 + dd * 50; p[s + "elbow"] = 120 * (1 - dd) + 5; p[s + "sh_abd"] = np.full(T, 20.0)
            p[s + "ev_med"][:] = 0.6
    if rng.random() < 0.25:  # seated (bench / chair)
        sym(p, "hip_flex", 90); sym(p, "knee", 90); p["lift"] = np.full(T, 0.45)
    return p


def o_pullup(rng, T, fps, b):
    """pull-ups / chin-ups: the hands stay on the bar, so the arm is solved by 2-link IK each frame.
    (Real pull-ups: wrists fixed, elbows nearly level — they swing out and down while the body rises.)"""
    p = blank(T)
    p["anchor"] = "hands"
    p["tag"] = "hanging"
    p["bar"] = rng.uniform(2.1, 2.6)
    ph = phase_track(rng, T, fps, rng.uniform(0.3, 0.9), pause_prob=0.15)
    d = np.minimum(cyc(ph % 1) ** rng.uniform(0.3, 0.8) * amp_track(rng, ph, 0.7, 1.15), 1.0)
    u, f = b["upper"], b["fore"]
    chin = rng.random() < 0.3                      # chin-up: arms in the sagittal plane, hands in front
    off = rng.uniform(0.0, 0.12) if chin else rng.uniform(-0.02, 0.35)  # hand offset from the shoulder
    r_hang = (u + f) * rng.uniform(0.95, 0.995)
    h_hang = np.sqrt(max(r_hang ** 2 - off ** 2, 0.05))
    h_top = rng.uniform(0.02, 0.3)
    h = h_hang * (1 - d) + h_top * d
    r = np.clip(np.sqrt(h * h + off * off), abs(u - f) + 0.02, u + f - 1e-3)
    phi = np.arctan2(off, h)                        # wrist direction, from straight up
    alpha = np.arccos(np.clip((u * u + r * r - f * f) / (2 * u * r), -1, 1))
    inner = np.arccos(np.clip((u * u + f * f - r * r) / (2 * u * f), -1, 1))
    a = np.degrees(phi + alpha)                     # upper arm from straight up, elbows out/forward
    if chin:
        sym(p, "sh_flex", 180 - a); sym(p, "sh_abd", rng.uniform(0, 12))
    else:
        sym(p, "sh_flex", 180 + rng.uniform(-8, 8)); sym(p, "sh_abd", a)
    sym(p, "elbow", 180 - np.degrees(inner)); sym(p, "ev_fwd", 0.0); sym(p, "ev_med", 0.0); sym(p, "ev_up", 1.0)
    p["Lknee"] = np.full(T, rng.uniform(0, 110)); p["Rknee"] = p["Lknee"] + rng.uniform(-30, 30)
    p["Lhip_flex"] = np.full(T, rng.uniform(-10, 45)); p["Rhip_flex"] = p["Lhip_flex"] + rng.uniform(-15, 15)
    p["Lknee"] = p["Lknee"] + d * rng.uniform(-20, 20); p["Lhip_flex"] = p["Lhip_flex"] + d * rng.uniform(-15, 25)
    p["pitch"] = rng.uniform(-10, 5) - d * rng.uniform(0, 12) + smooth_noise(rng, T, fps, 3)
    p["head_pitch"] = rng.uniform(-20, 10) + np.zeros(T)
    return p


def o_bench(rng, T, fps, b):
    p = blank(T)
    floor = rng.random() < 0.4
    ph = phase_track(rng, T, fps, rng.uniform(0.3, 0.9), pause_prob=0.1)
    d = cyc(ph % 1) * amp_track(rng, ph)  # 1 = arms extended
    p["pitch"] = np.full(T, -90 + rng.uniform(-3, 15))
    if floor:
        sym(p, "hip_flex", rng.uniform(120, 150)); sym(p, "knee", rng.uniform(70, 110))
    else:
        sym(p, "hip_flex", rng.uniform(80, 100)); sym(p, "knee", rng.uniform(70, 100)); p["lift"] = np.full(T, 0.0)
    # arms: extended = pointing to the ceiling (world flex 180), bottom: elbows out, forearms up
    sym(p, "sh_flex", 180 - (1 - d) * rng.uniform(60, 80)); sym(p, "sh_abd", (1 - d) * rng.uniform(50, 75))
    sym(p, "elbow", (1 - d) * rng.uniform(80, 110)); sym(p, "ev_up", 0.0); sym(p, "ev_fwd", 1.0); sym(p, "ev_med", 0.3)
    p["yaw"] = np.full(T, rng.uniform(-180, 180))
    return p


def o_arm_circles(rng, T, fps, b):
    p = o_idle(rng, T, fps, b)
    r = rng.uniform(0.7, 2.0)
    w = 2 * np.pi * (np.arange(T) / fps * r)
    big = rng.random() < 0.3
    R = rng.uniform(10, 30) if not big else rng.uniform(60, 80)
    base = rng.uniform(70, 100) if not big else 90
    sym(p, "sh_abd", base + R * np.sin(w)); sym(p, "sh_flex", R * np.cos(w) + (0 if not big else 0))
    sym(p, "elbow", rng.uniform(0, 15))
    return p


def o_hinge(rng, T, fps, b):
    """deadlift / good morning / kettlebell swing / clean: hip hinges that are not squats."""
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    kind = rng.choice(["deadlift", "goodmorning", "kb_swing", "clean"])
    if kind != "kb_swing":
        p["tag"] = "barbell"
    ph = phase_track(rng, T, fps, rng.uniform(0.3, 0.8), pause_prob=0.2)
    f = ph % 1
    d = cyc(f)
    if kind == "deadlift":
        p["pitch"] = p["pitch"] + d * rng.uniform(50, 75); sym(p, "hip_flex", d * rng.uniform(20, 45)); sym(p, "knee", d * rng.uniform(30, 60))
        sym(p, "sh_flex", rng.uniform(0, 10)); sym(p, "elbow", 5)
    elif kind == "goodmorning":
        p["pitch"] = p["pitch"] + d * rng.uniform(50, 85); sym(p, "knee", d * 15)
        arms_style(p, rng, "head", T, fps); sym(p, "sh_flex", p["Lsh_flex"] + p["pitch"])
    elif kind == "kb_swing":
        sw = np.sin(2 * np.pi * f)
        hinge = np.clip(-sw, 0, 1)
        p["pitch"] = p["pitch"] + hinge * rng.uniform(45, 65); sym(p, "knee", hinge * rng.uniform(20, 40)); sym(p, "hip_flex", hinge * 20)
        sym(p, "sh_flex", -20 * hinge + np.clip(sw, 0, 1) * rng.uniform(80, 170)); sym(p, "elbow", 5)
    else:  # clean: pull from the floor, catch in a front squat, stand, overhead
        down = seg(f, 0.0, 0.15) * (1 - seg(f, 0.15, 0.3))
        catch = seg(f, 0.3, 0.4) * (1 - seg(f, 0.45, 0.6))
        over = seg(f, 0.65, 0.75) * (1 - seg(f, 0.85, 0.95))
        p["pitch"] = p["pitch"] + down * 55 + catch * 15
        sym(p, "hip_flex", down * 40 + catch * 100); sym(p, "knee", down * 60 + catch * 120)
        sym(p, "sh_flex", down * 5 + (catch + seg(f, 0.3, 0.4) * (1 - seg(f, 0.6, 0.65))) * 70 + over * 170)
        sym(p, "elbow", catch * 130 + seg(f, 0.3, 0.4) * (1 - seg(f, 0.6, 0.7)) * 20); sym(p, "ev_up", 1.0)
        split = over * rng.uniform(20, 35)
        p["Lhip_flex"] = p["Lhip_flex"] + split; p["Rhip_flex"] = p["Rhip_flex"] - split
    return p


def o_olympic(rng, T, fps, b):
    """clean and jerk / snatch / jerks from the rack: barbell lifts that pass through squats and splits.
    Timed like the real lift: a held setup at the bar, a slow first pull, a fast second pull, a fast
    drop under the bar, a slow heavy recovery (this part alone is a front squat), rack hold, dip and
    drive, split, recovery of the feet, overhead hold, drop. Penn Action clips start at the setup."""
    p = blank(T)
    p["tag"] = "barbell"
    standing(p, rng, T, fps, 0.4)
    u = rng.uniform
    # key poses: (pitch, hip_flex, knee, sh_flex, sh_abd, elbow, split)
    K = {"stand": (3, 0, 5, 5, 10, 10, 0), "setup": (u(40, 60), u(80, 105), u(100, 130), 5, 12, 5, 0),
         "knee": (u(30, 45), u(40, 60), u(45, 70), 5, 12, 5, 0), "ext": (-8, -5, 5, 12, 15, 10, 0),
         "catch": (u(12, 25), u(95, 118), u(120, 150), u(75, 100), 25, u(135, 155), 0),
         "quarter": (15, u(35, 60), u(45, 75), 85, 25, 140, 0), "rack": (3, 0, 8, u(70, 95), 25, u(130, 150), 0),
         "dip": (5, u(12, 25), u(20, 35), 80, 25, 140, 0), "drive": (0, 0, 5, 150, 25, 40, 0),
         "split": (5, 0, 35, 170, 25, 10, 1), "over": (3, 0, 5, u(160, 178), 25, 10, 0),
         "drop": (3, 0, 5, 40, 15, 30, 0), "ohs": (10, u(95, 115), u(115, 140), 165, 40, 10, 0)}
    pull = [("setup", (0.6, 1.5)), ("setup", (0.2, 2.5)), ("knee", (0.35, 0.8)), ("ext", (0.15, 0.3))]
    jerk = [("dip", (0.25, 0.45)), ("drive", (0.12, 0.25)), ("split", (0.15, 0.3)), ("split", (0.3, 1.2)),
            ("over", (0.5, 1.2)), ("over", (0.4, 2.0))]
    kind = rng.choice(["clean_jerk", "clean_jerk", "power_clean", "snatch", "jerk"])
    if kind == "clean_jerk":
        seq = [("stand", (0.3, 1.5))] + pull + [("catch", (0.2, 0.4)), ("catch", (0.05, 0.6)), ("rack", (0.8, 2.5)),
                                                ("rack", (0.4, 2.5))] + jerk + [("drop", (0.3, 0.7)), ("stand", (0.3, 1.0))]
    elif kind == "power_clean":
        seq = [("stand", (0.3, 1.5))] + pull + [("quarter", (0.15, 0.3)), ("rack", (0.4, 1.0)), ("rack", (0.3, 1.5)),
                                                ("drop", (0.3, 0.7)), ("stand", (0.3, 1.0))]
    elif kind == "snatch":
        seq = [("stand", (0.3, 1.5))] + pull + [("ohs", (0.25, 0.45)), ("ohs", (0.05, 0.6)), ("over", (0.8, 2.5)),
                                                ("over", (0.4, 2.0)), ("drop", (0.3, 0.7)), ("stand", (0.3, 1.0))]
    else:
        seq = [("rack", (0.5, 2.5))] + jerk + [("rack", (0.5, 1.0))]
    times, keys = [], []
    t = -u(0, 0.6) if rng.random() < 0.5 else -u(0, 8)
    while t < T / fps + 2:
        for k, (lo, hi) in seq:
            t += u(lo, hi)
            times.append(t); keys.append(K[k])
    v = np.array(keys, float)
    ts = np.arange(T) / fps
    cols = [np.interp(ts, times, v[:, i]) for i in range(7)]
    p["pitch"] = p["pitch"] + cols[0]
    sym(p, "hip_flex", cols[1]); sym(p, "knee", cols[2]); sym(p, "sh_flex", cols[3]); sym(p, "sh_abd", cols[4])
    sym(p, "elbow", cols[5]); sym(p, "ev_up", 1.0); sym(p, "ev_med", 0.3); sym(p, "ev_fwd", 0.2)
    sp = cols[6] * rng.uniform(25, 40)
    lead = rng.choice(["L", "R"]); back = "R" if lead == "L" else "L"
    p[lead + "hip_flex"] = p[lead + "hip_flex"] + sp; p[lead + "knee"] = p[lead + "knee"] + sp
    p[back + "hip_flex"] = p[back + "hip_flex"] - sp * 0.6; p[back + "knee"] = p[back + "knee"] + sp * 0.5
    sym(p, "hip_abd", rng.uniform(5, 15))
    return p


def o_cardio(rng, T, fps, b):
    """high knees, butt kicks, side steps, calf raises, mountain climbers, plank hold, kicks, step-ups."""
    p = blank(T)
    standing(p, rng, T, fps, 0.3)
    kind = rng.choice(["high_knees", "butt_kicks", "side_step", "calf", "climbers", "plank_hold", "kicks", "skater"])
    r = rng.uniform(0.8, 2.2)
    w = 2 * np.pi * (np.arange(T) / fps * r + rng.uniform(0, 1))
    arms_style(p, rng, None, T, fps)
    if kind == "high_knees":
        p["Lhip_flex"] = rng.uniform(60, 90) * np.clip(np.sin(w), 0, 1); p["Rhip_flex"] = rng.uniform(60, 90) * np.clip(-np.sin(w), 0, 1)
        p["Lknee"] = p["Lhip_flex"] * 1.2; p["Rknee"] = p["Rhip_flex"] * 1.2
        p["jump"] = 0.04 * np.abs(np.sin(w)); sym(p, "elbow", 80)
    elif kind == "butt_kicks":
        p["Lknee"] = 130 * np.clip(np.sin(w), 0, 1); p["Rknee"] = 130 * np.clip(-np.sin(w), 0, 1); p["jump"] = 0.04 * np.abs(np.sin(w))
    elif kind == "side_step":
        o = 0.5 + 0.5 * np.sin(w / 2)
        sym(p, "hip_abd", 4 + 12 * o); sym(p, "knee", 15 + 15 * o); p["x"] = p["x"] + 0.3 * np.sin(w / 2); p["pitch"] = p["pitch"] + 10
    elif kind == "calf":
        p["jump"] = 0.06 * (0.5 - 0.5 * np.cos(w / 2))
    elif kind in ("climbers", "plank_hold"):
        q = _keypose(b, rng, "plank")
        for k, v in q.items():
            if k not in ("anchor", "bar"):
                p[k] = np.full(T, float(v))
        if kind == "climbers":
            p["Lhip_flex"] = p["Lhip_flex"] + rng.uniform(60, 100) * np.clip(np.sin(w), 0, 1)
            p["Rhip_flex"] = p["Rhip_flex"] + rng.uniform(60, 100) * np.clip(-np.sin(w), 0, 1)
            p["Lknee"] = p["Lknee"] + 100 * np.clip(np.sin(w), 0, 1); p["Rknee"] = p["Rknee"] + 100 * np.clip(-np.sin(w), 0, 1)
        else:
            p["pitch"] = p["pitch"] + smooth_noise(rng, T, fps, 2)
    elif kind == "kicks":
        sd = rng.choice(["L", "R"])
        p[sd + "hip_flex"] = rng.uniform(50, 90) * np.clip(np.sin(w / 2), 0, 1) ** 2; p[sd + "knee"] = 20 * np.clip(np.cos(w / 2), 0, 1)
    else:
        o = np.sin(w / 2)
        p["x"] = p["x"] + 0.5 * o; sym(p, "knee", 30 + 20 * np.abs(o)); p["pitch"] = p["pitch"] + 20
        p["Lhip_flex"] = 30 * np.clip(o, 0, 1) + 10; p["Rhip_flex"] = 30 * np.clip(-o, 0, 1) + 10
        p["Lknee"] = p["Lknee"] + 40 * np.clip(o, 0, 1); p["Rknee"] = p["Rknee"] + 40 * np.clip(-o, 0, 1)
    return p


def o_floor_idle(rng, T, fps, b):
    """sitting on the floor / chair, lying, kneeling."""
    p = blank(T)
    kind = rng.choice(["sit_floor", "chair", "lying", "kneel"])
    standing(p, rng, T, fps, 0.5)
    arms_style(p, rng, None, T, fps)
    if kind == "sit_floor":
        p["pitch"] = p["pitch"] - rng.uniform(0, 20); sym(p, "hip_flex", rng.uniform(70, 110)); sym(p, "knee", rng.uniform(0, 120))
    elif kind == "chair":
        sym(p, "hip_flex", 90 + rng.uniform(-10, 10)); sym(p, "knee", rng.uniform(70, 100)); p["lift"] = np.full(T, 0.45)
    elif kind == "lying":
        p["pitch"] = np.full(T, rng.choice([-90, 90]) + rng.uniform(-5, 5)); sym(p, "hip_flex", -p["pitch"])
        p["yaw"] = np.full(T, rng.uniform(-180, 180))
    else:
        sym(p, "hip_flex", rng.uniform(-5, 10)); sym(p, "knee", rng.uniform(80, 100))
    return p


OTHER = [(o_idle, 3.0), (o_talk, 2.0), (o_walk, 2.0), (o_stretch, 1.5), (o_random, 1.5), (o_jump_rope, 1.5),
         (o_lying_core, 1.5), (o_press, 2.0), (o_pullup, 2.5), (o_bench, 1.2), (o_arm_circles, 1.0),
         (o_hinge, 1.2), (o_olympic, 2.6), (o_cardio, 1.5), (o_floor_idle, 0.7)]
TARGETS = {"jumping_jacks": jumping_jacks, "lunges": lunges, "burpees": burpees, "squats": squats,
           "push_ups": push_ups}


@contextlib.contextmanager
def other_weights(**weights):
    """Within the block, `other` draws its activities with these weights, by function name
    (`other_weights(o_olympic=8.0)`); the rest keep theirs, and the mix is restored afterwards. The
    RNG draws are the same as without it when no weight changes."""
    saved = list(OTHER)
    OTHER[:] = [(fn, weights.get(fn.__name__, w)) for fn, w in OTHER]
    try:
        yield
    finally:
        OTHER[:] = saved


def other(rng, T, fps, b):
    w = np.array([x[1] for x in OTHER]); w /= w.sum()
    fn = OTHER[rng.choice(len(OTHER), p=w)][0]
    return fn(rng, T, fps, b), np.zeros(T, bool)
