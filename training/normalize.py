"""posewatch pose-window normalisation, spec id "pw-norm-v1" (see README.md, "Normalisation").

Float32 throughout; sums accumulate sequentially in frame order t = 0..L-1 (then joint order where
stated) exactly as the Swift port does. Vectorised over windows, never over the summed axis.
"""
import numpy as np

from posegen.body import LR_SWAP  # COCO-17 index of each joint's left/right counterpart

SPEC_ID = "pw-norm-v1"
SCORE_MIN = np.float32(0.25)   # a joint is valid iff score >= SCORE_MIN
CLIP = np.float32(4.0)         # normalised coordinates are clipped to [-CLIP, CLIP]
MIN_SCALE = np.float32(1.0)    # pixels; lower bound of the scale
FALLBACK_DIV = np.float32(3.0)  # scale fallback: largest extent of valid joints / FALLBACK_DIV
# model joints: COCO-17 indices used by the model, in input order (eyes and ears are not used:
# detectors and annotations disagree most on them and they carry little about the action)
USED = [0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
NJ = len(USED)
LS, RS, LH, RH = 1, 2, 7, 8   # positions within USED
# left/right mirror of the model joints: position j of the mirrored pose holds joint MIRROR[j] (nose
# stays, each left joint swaps with its right one). The normalisation commutes with a horizontal flip
# (hip-centred, scale from distances, symmetric clip), so a flipped camera image gives exactly
# x' -> -x' with these joints swapped: train.py's mirror twins rely on that.
MIRROR = [USED.index(LR_SWAP[j]) for j in USED]
F = np.float32


def params():
    return {"id": SPEC_ID, "score_min": float(SCORE_MIN), "clip": float(CLIP), "min_scale": float(MIN_SCALE),
            "fallback_div": float(FALLBACK_DIV), "centre": "mean hip point | mean shoulder point | mean valid joint",
            "scale": "mean max(|shoulder point - hip point|, shoulder width) | extent/fallback_div", "channels": ["x", "y", "valid"],
            "coco17_indices": USED}


def normalize_windows(K):
    """K: (N, L, 17, 3) float (x, y, score) in pixels (COCO-17); a missing pose is all zeros.
    -> (N, L, 3*NJ) float32: per model joint (x', y', v)."""
    K = np.asarray(K, np.float32)[:, :, USED]
    N, L = K.shape[:2]
    x, y, s = K[..., 0], K[..., 1], K[..., 2]
    valid = s >= SCORE_MIN
    vl, vr = valid[..., LH], valid[..., RH]
    hipOK = vl | vr
    # hip point: mid-hip if both hips are valid, else the one valid hip
    hx = np.where(vl & vr, (x[..., LH] + x[..., RH]) * F(0.5), np.where(vl, x[..., LH], x[..., RH]))
    hy = np.where(vl & vr, (y[..., LH] + y[..., RH]) * F(0.5), np.where(vl, y[..., LH], y[..., RH]))
    vl, vr = valid[..., LS], valid[..., RS]
    shOK = vl | vr
    sx = np.where(vl & vr, (x[..., LS] + x[..., RS]) * F(0.5), np.where(vl, x[..., LS], x[..., RS]))
    sy = np.where(vl & vr, (y[..., LS] + y[..., RS]) * F(0.5), np.where(vl, y[..., LS], y[..., RS]))
    both = hipOK & shOK
    torso = np.sqrt((sx - hx) * (sx - hx) + (sy - hy) * (sy - hy))
    dwx, dwy = x[..., LS] - x[..., RS], y[..., LS] - y[..., RS]
    width = np.where(vl & vr, np.sqrt(dwx * dwx + dwy * dwy), F(0))
    st = np.maximum(torso, width)
    z = np.zeros(N, np.float32)
    hsx, hsy, hn = z.copy(), z.copy(), z.copy()
    ssx, ssy, sn = z.copy(), z.copy(), z.copy()
    jsx, jsy, jn = z.copy(), z.copy(), z.copy()
    tsum, tn = z.copy(), z.copy()
    xmin = np.full(N, np.inf, np.float32); xmax = np.full(N, -np.inf, np.float32)
    ymin = np.full(N, np.inf, np.float32); ymax = np.full(N, -np.inf, np.float32)
    for t in range(L):
        m = hipOK[:, t]
        hsx = np.where(m, hsx + hx[:, t], hsx); hsy = np.where(m, hsy + hy[:, t], hsy); hn = hn + m
        m = shOK[:, t]
        ssx = np.where(m, ssx + sx[:, t], ssx); ssy = np.where(m, ssy + sy[:, t], ssy); sn = sn + m
        m = both[:, t]
        tsum = np.where(m, tsum + st[:, t], tsum); tn = tn + m
        for j in range(NJ):
            m = valid[:, t, j]
            jsx = np.where(m, jsx + x[:, t, j], jsx); jsy = np.where(m, jsy + y[:, t, j], jsy); jn = jn + m
            xmin = np.where(m, np.minimum(xmin, x[:, t, j]), xmin); xmax = np.where(m, np.maximum(xmax, x[:, t, j]), xmax)
            ymin = np.where(m, np.minimum(ymin, y[:, t, j]), ymin); ymax = np.where(m, np.maximum(ymax, y[:, t, j]), ymax)
    with np.errstate(invalid="ignore", divide="ignore"):
        cx = np.where(hn > 0, hsx / np.maximum(hn, 1), np.where(sn > 0, ssx / np.maximum(sn, 1), jsx / np.maximum(jn, 1)))
        cy = np.where(hn > 0, hsy / np.maximum(hn, 1), np.where(sn > 0, ssy / np.maximum(sn, 1), jsy / np.maximum(jn, 1)))
        ext = np.maximum(xmax - xmin, ymax - ymin)
        S = np.where(tn > 0, tsum / np.maximum(tn, 1), ext / FALLBACK_DIV)
    S = np.where(jn > 0, np.maximum(S, MIN_SCALE), F(1.0)).astype(np.float32)
    cx = np.where(jn > 0, cx, 0).astype(np.float32); cy = np.where(jn > 0, cy, 0).astype(np.float32)
    nx = np.clip((x - cx[:, None, None]) / S[:, None, None], -CLIP, CLIP)
    ny = np.clip((y - cy[:, None, None]) / S[:, None, None], -CLIP, CLIP)
    out = np.stack([np.where(valid, nx, 0), np.where(valid, ny, 0), valid.astype(np.float32)], -1)
    return out.reshape(N, L, 3 * NJ).astype(np.float32)


def mirror_normalized(Z):
    """(N, L, 3*NJ) normalised windows -> the same windows seen in a horizontally flipped image."""
    Z = np.asarray(Z, np.float32)
    z = Z.reshape(Z.shape[0], Z.shape[1], NJ, 3)[:, :, MIRROR].copy()
    z[..., 0] = np.where(z[..., 0] == 0, F(0), -z[..., 0])   # invalid joints stay +0
    return z.reshape(Z.shape)


def normalize_window_scalar(K):
    """Straight scalar transcription of the README spec (one window, float32 scalars, sequential
    sums) — the shape the Swift port takes. Used to check normalize_windows bit for bit."""
    K = np.asarray(K, np.float32)[:, USED]
    L = K.shape[0]
    zero = F(0)
    hsx = hsy = ssx = ssy = jsx = jsy = tsum = zero
    hn = sn = jn = tn = 0
    xmin = ymin = F(np.inf); xmax = ymax = F(-np.inf)
    for t in range(L):
        v = [K[t, j, 2] >= SCORE_MIN for j in range(NJ)]

        def point(a, b):
            if v[a] and v[b]:
                return (K[t, a, 0] + K[t, b, 0]) * F(0.5), (K[t, a, 1] + K[t, b, 1]) * F(0.5)
            if v[a]:
                return K[t, a, 0], K[t, a, 1]
            if v[b]:
                return K[t, b, 0], K[t, b, 1]
            return None
        H, S = point(LH, RH), point(LS, RS)
        if H is not None:
            hsx += H[0]; hsy += H[1]; hn += 1
        if S is not None:
            ssx += S[0]; ssy += S[1]; sn += 1
        if H is not None and S is not None:
            dx, dy = S[0] - H[0], S[1] - H[1]
            torso = np.sqrt(dx * dx + dy * dy)
            width = zero
            if v[LS] and v[RS]:
                wx, wy = K[t, LS, 0] - K[t, RS, 0], K[t, LS, 1] - K[t, RS, 1]
                width = np.sqrt(wx * wx + wy * wy)
            tsum += max(torso, width); tn += 1
        for j in range(NJ):
            if v[j]:
                x, y = K[t, j, 0], K[t, j, 1]
                jsx += x; jsy += y; jn += 1
                xmin = min(xmin, x); xmax = max(xmax, x); ymin = min(ymin, y); ymax = max(ymax, y)
    out = np.zeros((L, NJ, 3), np.float32)
    if jn == 0:
        return out.reshape(L, 3 * NJ)
    if hn:
        cx, cy = hsx / F(hn), hsy / F(hn)
    elif sn:
        cx, cy = ssx / F(sn), ssy / F(sn)
    else:
        cx, cy = jsx / F(jn), jsy / F(jn)
    s = tsum / F(tn) if tn else max(xmax - xmin, ymax - ymin) / FALLBACK_DIV
    s = max(s, MIN_SCALE)
    for t in range(L):
        for j in range(NJ):
            if K[t, j, 2] >= SCORE_MIN:
                out[t, j, 0] = min(max((K[t, j, 0] - cx) / s, -CLIP), CLIP)
                out[t, j, 1] = min(max((K[t, j, 1] - cy) / s, -CLIP), CLIP)
                out[t, j, 2] = F(1)
    return out.reshape(L, 3 * NJ)
