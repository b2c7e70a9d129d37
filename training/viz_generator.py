"""DEV: draw generated clips (normalised windows) as skeleton strips, one row per class -> PNG."""
import sys
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from posegen.dataset import make_clip, LABELS
from normalize import normalize_windows

EDGES = [(5, 7), (7, 9), (6, 8), (8, 10), (5, 6), (5, 11), (6, 12), (11, 12), (11, 13), (13, 15), (12, 14), (14, 16), (0, 5), (0, 6)]


def draw(ax, f, title=""):
    if len(f) == 39:  # 13 model joints -> COCO-17 slots
        from normalize import USED
        g = np.zeros(51, np.float32)
        for i, j in enumerate(USED):
            g[3 * j:3 * j + 3] = f[3 * i:3 * i + 3]
        f = g
    v = f[2::3] > 0
    x, y = f[0::3], f[1::3]
    for a, b in EDGES:
        if v[a] and v[b]:
            col = "r" if (a % 2 == 1 and b % 2 == 1 and a > 4) else ("b" if (a % 2 == 0 and b % 2 == 0 and a > 4) else "k")
            ax.plot([x[a], x[b]], [y[a], y[b]], col, lw=1)
    ax.scatter(x[v], y[v], s=3)
    ax.set_xlim(-3, 3); ax.set_ylim(3, -3); ax.set_xticks([]); ax.set_yticks([]); ax.set_title(title, fontsize=6)


def main(seed=0, out="/tmp/gen.png", src=None):
    rng = np.random.default_rng(seed)
    rows = LABELS if src is None else [None]
    fig, axs = plt.subplots(len(LABELS) * 2, 10, figsize=(14, 2.0 * len(LABELS) * 2))
    for r, lab in enumerate(LABELS):
        for rep in range(2):
            k, fl, size = make_clip(rng, lab, 45, 15.0)
            Z = normalize_windows(k[None, 0:30])[0]
            for c in range(10):
                draw(axs[2 * r + rep, c], Z[c * 3], f"{lab} t={c*3}")
    plt.tight_layout(); plt.savefig(out, dpi=70)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0, sys.argv[2] if len(sys.argv) > 2 else "/tmp/gen.png")
