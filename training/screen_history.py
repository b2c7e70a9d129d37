#!/usr/bin/env python3
"""Screen (r29, dev only): a learned second stage over the last K decisions' embeddings.

The committed int8 model runs in LiteRT with all intermediate tensors kept; the per-window
embedding is each member's hidden dense layer (64 ReLU units, dequantized) averaged with its mirror
twin's, the two members concatenated (128 values), plus the four branches' mean logits (6). A small
head sees the current window's features and those of the previous K decisions of the same clip
(zeros and a 0 flag where there was none: start of a clip) and predicts the 6 classes; it is
trained on every stride-5 window of freshly generated clips (posegen.dataset.make_sequences, a seed
the members never saw), with the older history randomly dropped in 30 % of the samples.

    python training/screen_history.py embed    # -> /tmp/hist_screen/*.npz (generated, Penn, dev videos)
    python training/screen_history.py heads --average --show-dev \
        --variants "EL,6,resL,32;EL,6,resL,32,1;EL,6,resL,32,2;EL,6,resL,32,3"
A variant is features,K,kind,width[,seed offset]: features E (embedding), EP (+ the model's
probabilities), EL (+ its mean logits), P (log probabilities only); kinds in build_head. Each prints
held-out generated sequences (gen_val), Penn windows in clip order (history = the clip's earlier
windows only; short clips one looped window without history), the dev videos as evaluate.py (c)
with the history running over the whole video, and the head averaged with the committed model.
Needs the committed model, ../shared/data and /tmp/posewatch_video_kp; writes only to /tmp.
"""
import argparse, csv, json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np
import normalize as NZ
from config import FPS, WINDOW, STRIDE, LABELS
import evaluate as EV

OUT = "/tmp/hist_screen"
MODEL = os.path.join(HERE, "..", "Sources", "CActionModel", "action_classifier.tflite")


class Embedder:
    """the committed model in LiteRT; per window: probabilities and the mirror-averaged hidden layers"""

    def __init__(self, path):
        from ai_edge_litert.interpreter import Interpreter
        self.it = Interpreter(model_path=path, num_threads=1, experimental_preserve_all_tensors=True)
        self.it.allocate_tensors()
        self.i = self.it.get_input_details()[0]["index"]
        self.o = self.it.get_output_details()[0]["index"]
        # hidden dense outputs: FULLY_CONNECTED ops whose input is a MEAN (global average pool);
        # a member and its twin share the weight tensor
        det = {d["index"]: d for d in self.it.get_tensor_details()}
        by_w = {}
        for op in self.it._get_ops_details():
            if op["op_name"] == "FULLY_CONNECTED" and det[op["outputs"][0]]["shape"].tolist() == [1, 64]:
                by_w.setdefault(int(op["inputs"][1]), []).append(int(op["outputs"][0]))
        self.pairs = [tuple(v) for _, v in sorted(by_w.items())]
        # each branch's logits: the FULLY_CONNECTED after its hidden layer
        self.logit_t = [int(op["outputs"][0]) for op in self.it._get_ops_details()
                        if op["op_name"] == "FULLY_CONNECTED" and int(op["inputs"][0]) in {t for p in self.pairs for t in p}]
        assert len(self.logit_t) == 4
        assert len(self.pairs) == 2 and all(len(p) == 2 for p in self.pairs), self.pairs
        self.q = {t: det[t]["quantization"] for p in self.pairs for t in p}
        self.q.update({t: det[t]["quantization"] for t in self.logit_t})

    def run(self, raw):
        Z = NZ.normalize_windows(raw)
        P = np.zeros((len(Z), len(LABELS)), np.float32)
        E = np.zeros((len(Z), 64 * len(self.pairs)), np.float32)
        Lg = np.zeros((len(Z), len(LABELS)), np.float32)
        for n, z in enumerate(Z):
            self.it.set_tensor(self.i, z[None]); self.it.invoke()
            P[n] = self.it.get_tensor(self.o)[0]
            for m, (a, b) in enumerate(self.pairs):
                ha = (self.it.get_tensor(a)[0].astype(np.float32) - self.q[a][1]) * self.q[a][0]
                hb = (self.it.get_tensor(b)[0].astype(np.float32) - self.q[b][1]) * self.q[b][0]
                E[n, 64 * m:64 * (m + 1)] = 0.5 * (ha + hb)
            for t in self.logit_t:
                Lg[n] += 0.25 * (self.it.get_tensor(t)[0].astype(np.float32) - self.q[t][1]) * self.q[t][0]
        return P, E, Lg


def save_seqs(name, seqs):
    """seqs: list of dicts with P, E, y, use (+ extra keys) -> one npz with offsets"""
    lens = np.array([len(s["y"]) for s in seqs])
    d = {k: np.concatenate([s[k] for s in seqs]) for k in ("P", "E", "Lg", "y", "use")}
    d["lens"] = lens
    for k in seqs[0]:
        if k not in d:
            d[k] = np.array([s[k] for s in seqs])
    np.savez(os.path.join(OUT, name + ".npz"), **d)


def embed(a):
    from posegen.dataset import make_sequences
    os.makedirs(OUT, exist_ok=True)
    em = Embedder(MODEL)
    for name, seed, n in (("gen_train", a.seed, a.clips), ("gen_val", a.seed + 1, a.clips // 5)):
        if os.path.exists(os.path.join(OUT, name + ".npz")) and not a.force:
            continue
        t = time.time()
        seqs = []
        rng = np.random.default_rng(seed)
        for c in range(0, n, 1000):  # in chunks: all raw windows at once would need gigabytes
            for W, y, use in make_sequences(rng, min(1000, n - c), WINDOW, FPS, STRIDE):
                P, E, Lg = em.run(W)
                seqs.append({"P": P, "E": E, "Lg": Lg, "y": y, "use": use})
        save_seqs(name, seqs)
        print(name, sum(len(s["y"]) for s in seqs), "windows", f"{time.time()-t:.0f}s", flush=True)
    # Penn: each clip's windows in order; a clip shorter than a window is one looped window
    seqs = []
    for r, k in EV.load_penn():
        lab = LABELS.index(EV.PENN_MAP.get(r["action"], "other"))
        W = EV.windows_over(k, WINDOW, STRIDE, "loop")
        P, E, Lg = em.run(W)
        seqs.append({"P": P, "E": E, "Lg": Lg, "y": np.full(len(P), lab), "use": np.ones(len(P), bool), "action": r["action"]})
    save_seqs("penn", seqs)
    print("penn", sum(len(s["y"]) for s in seqs), "windows", flush=True)
    # dev videos: every window of the whole video in order (history runs across the video, as live);
    # per span the windows whose middle lies inside; spans shorter than a window: one looped window
    kpdir = "/tmp/posewatch_video_kp"
    meta = json.load(open(os.path.join(kpdir, "frames.json")))
    rows = list(csv.DictReader(open(os.path.join(EV.VIDEOS, "labels.csv"))))
    seqs = []
    for r in rows:
        m = meta[r["file"]]
        k = np.load(os.path.join(kpdir, m["npy"])).astype(np.float32)
        fps, T = m["fps"], len(k)
        A = float(r["active_from_s"]) if r["active_from_s"] else 0.0
        B = float(r["active_to_s"]) if r["active_to_s"] else T / fps
        lab = LABELS.index(r["label"])
        starts = np.arange(0, max(T - WINDOW + 1, 0), STRIDE)
        mid = (starts + (WINDOW - 1) / 2) / fps
        inside = (mid >= A) & (mid <= B)
        if inside.any():
            W = np.stack([k[s:s + WINDOW] for s in starts])
            use = inside
        else:
            f0, f1 = int(np.ceil(A * fps)), min(T, int(np.floor(B * fps)) + 1)
            W = EV.windows_over(k[f0:f1], WINDOW, STRIDE, "loop")
            use = np.ones(len(W), bool)
        P, E, Lg = em.run(W)
        outside = np.zeros(len(W), bool)
        if inside.any():
            outside = (mid < A - 1.0) | (mid > B + 1.0)
        seqs.append({"P": P, "E": E, "Lg": Lg, "y": np.full(len(P), lab), "use": use, "outside": outside,
                     "file": r["file"]})
    lens = np.array([len(s["y"]) for s in seqs])
    d = {k: np.concatenate([s[k] for s in seqs]) for k in ("P", "E", "Lg", "y", "use", "outside")}
    np.savez(os.path.join(OUT, "dev.npz"), lens=lens, files=np.array([s["file"] for s in seqs]), **d)
    print("dev", int(lens.sum()), "windows", flush=True)


# ------------------------------------------------------------------------------------------ heads
def load(name):
    d = dict(np.load(os.path.join(OUT, name + ".npz"), allow_pickle=True))
    d["off"] = np.concatenate([[0], np.cumsum(d["lens"])])
    return d


def history(d, K, feat):
    """-> X (N, K+1, F+1): per window its own features and those of the previous K windows of the
    same sequence (oldest first, current last), the last channel 1 where a decision exists."""
    Fx = feat(d)
    N, F = Fx.shape
    X = np.zeros((N, K + 1, F + 1), np.float32)
    for s in range(len(d["lens"])):
        a, b = d["off"][s], d["off"][s + 1]
        for t in range(a, b):
            for h in range(K + 1):  # slot K = current, slot K-h = h decisions ago
                u = t - h
                if u < a:
                    break
                X[t, K - h, :F] = Fx[u]
                X[t, K - h, F] = 1.0
    return X


def truncate(rng, X, p):
    """randomly forget the older part of the history (as after start-up or an absence)"""
    K = X.shape[1] - 1
    if K == 0:
        return X
    keep = np.where(rng.random(len(X)) < p, rng.integers(0, K, len(X)), K)  # previous decisions kept
    return X * (np.arange(K + 1)[None, :] >= (K - keep)[:, None])[:, :, None]


def build_head(tf, K, F, kind, width):
    """One of r29's head variants over K + 1 slots of F + 1 features (the current window last)."""
    k = tf.keras
    inp = k.Input((K + 1, F + 1))

    def trunk(x, dense=64, temporal=False):
        """a per-slot projection (shared over the slots) [, a k3 conv across slots], flattened, dense"""
        x = k.layers.Conv1D(width, 1, activation="relu")(x)
        if temporal:
            x = k.layers.Conv1D(width, 3, activation="relu", padding="valid")(x)
        x = k.layers.Flatten()(x)
        x = k.layers.Dropout(0.2)(x)
        return k.layers.Dense(dense, activation="relu")(x)

    def corrected(x, base, l2=0.0):
        """`base` (the current window's decision) plus a learned correction from x, starting at 0"""
        corr = k.layers.Dense(len(LABELS), kernel_initializer="zeros",
                              kernel_regularizer=k.regularizers.l2(l2) if l2 else None)(x)
        base = k.layers.Lambda(base)(inp)
        return k.Model(inp, k.layers.Softmax()(k.layers.Add()([base, corr])))

    # the current slot's last 6 features: the mean logits (mean probabilities for the log variants)
    def current(t):
        return t[:, -1, F - len(LABELS):F]

    def log_current(t):
        return tf.math.log(tf.maximum(current(t), 1e-3))

    if kind.startswith("past"):
        # the committed model's decision times a learned prior from the previous K decisions only
        # (log P_r26(current window) + g(history)); with no history g is a constant
        return corrected(trunk(k.layers.Cropping1D((0, 1))(inp)), log_current)
    if kind.startswith("resL"):
        # "resL<d>": the hidden dense layer d wide (64 without a number); as "res", but the
        # correction is added to the mean of the four branches' logits, which an int8 graph can
        # compute without a LOG op
        return corrected(trunk(inp, dense=int(kind[4:] or 64)), current)
    if kind.startswith("res"):
        # residual: the committed model's decision (log of its probabilities) plus a learned
        # correction from the history ("res<l2>": with that L2 on the correction)
        return corrected(trunk(inp), log_current, float(kind[3:] or 0))
    # "dense" / "conv": a plain classifier over the slots
    x = trunk(inp, temporal=kind == "conv")
    return k.Model(inp, k.layers.Dense(len(LABELS), activation="softmax")(x))


def per_class(d, pred):
    acts = d["action"]
    res = {}
    off = d["off"]
    for s, a in enumerate(acts):
        sl = slice(off[s], off[s + 1])
        ok, n = res.get(a, (0, 0))
        res[a] = (ok + int(np.sum(pred[sl] == d["y"][sl])), n + off[s + 1] - off[s])
    return ", ".join(f"{a} {ok/n*100:.1f}%" for a, (ok, n) in sorted(res.items()))


def dev_spans(d, pred, verbose=False):
    ok_spans, wy, wp, outp = 0, [], [], []
    off = d["off"]
    for s, f in enumerate(d["files"]):
        sl = slice(off[s], off[s + 1])
        use = d["use"][sl]
        p = pred[sl][use]
        y = int(d["y"][sl][0])
        votes = np.bincount(p, minlength=len(LABELS))
        best = int(votes.argmax())  # ties: lowest index (evaluate.py breaks ties by probability mass)
        ok_spans += best == y
        wy += [y] * len(p); wp += list(p)
        outp += list(pred[sl][d["outside"][sl]])
        if verbose and best != y:
            print("   BAD", f, LABELS[y], {LABELS[i]: int(c) for i, c in enumerate(votes) if c})
    wy, wp = np.array(wy), np.array(wp)
    return ok_spans, len(d["files"]), float(np.mean(wy == wp)), float(np.mean(np.array(outp) == 5))


def heads(a):
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tr, va, pe, dv = load("gen_train"), load("gen_val"), load("penn"), load("dev")

    def report(name, cm_title, Pv, Pp, Pd, tail=""):
        """one head's (or an average's) figures: generated, Penn (per class, confusion), dev spans"""
        pv, pp, pd = Pv.argmax(1), Pp.argmax(1), Pd.argmax(1)
        mv = va["use"]
        okp = int(np.sum(pp == pe["y"]))
        sp = dev_spans(dv, pd, verbose=True)
        print(f"== {name}: gen_val {np.mean(pv[mv] == va['y'][mv])*100:.1f}%  "
              f"penn {okp/len(pp)*100:.1f}% ({okp}/{len(pp)})  dev spans {sp[0]}/{sp[1]} c' {sp[2]*100:.1f}% "
              f"outside other {sp[3]*100:.1f}%{tail}", flush=True)
        print("   penn per class:", per_class(pe, pp))
        EV.print_cm(cm_title, LABELS, pe["y"], pp)

    # baseline: the committed model's own decisions
    for nm, d in (("gen_val", va), ("penn", pe)):
        m = d["use"]
        print(f"r26 {nm}: {np.mean(d['P'].argmax(1)[m] == d['y'][m])*100:.1f}%")
    print("r26 penn per class:", per_class(pe, pe["P"].argmax(1)))
    print("r26 dev spans %d/%d, c' %.1f%%, outside other %.1f%%" % (lambda r: (r[0], r[1], r[2] * 100, r[3] * 100))(dev_spans(dv, dv["P"].argmax(1))))
    feats = {"E": lambda d: d["E"], "EP": lambda d: np.concatenate([d["E"], d["P"]], 1),
             "P": lambda d: np.log(np.maximum(d["P"], 1e-3)),
             # the members' mean logits last: the "resL" head adds its correction to them
             "EL": lambda d: np.concatenate([d["E"], d["Lg"]], 1)}
    runs = []
    for spec in a.variants.split(";"):
        fname, K, kind, width, *rest = spec.split(",")
        K, width = int(K), int(width)
        hseed = a.seed + (int(rest[0]) if rest else 0)
        feat = feats[fname]
        t = time.time()
        tf.keras.utils.set_random_seed(hseed)
        Xtr, Xva, Xpe, Xdv = (history(d, K, feat) for d in (tr, va, pe, dv))
        rng = np.random.default_rng(hseed)
        Xtr_t = truncate(rng, Xtr, a.trunc)
        m = tr["use"]
        ytr = tr["y"][m]
        cw = len(ytr) / (len(LABELS) * np.bincount(ytr, minlength=len(LABELS)))
        model = build_head(tf, K, Xtr.shape[2] - 1, kind, width)
        steps = int(np.ceil(m.sum() / 256)) * a.epochs
        lr = tf.keras.optimizers.schedules.CosineDecay(2e-3, steps, alpha=0.05)
        model.compile(tf.keras.optimizers.Adam(lr), tf.keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
        model.fit(Xtr_t[m], ytr, batch_size=256, epochs=a.epochs, shuffle=True, verbose=0,
                  class_weight={i: float(c) for i, c in enumerate(cw)})
        Pv, Pp, Pd = (model.predict(X, batch_size=2048, verbose=0) for X in (Xva, Xpe, Xdv))
        for w in (0.5,):  # the head averaged with the committed model's own probabilities
            mix = [(1 - w) * P + w * d["P"] for P, d in ((Pv, va), (Pp, pe), (Pd, dv))]
            mv = va["use"]
            sp = dev_spans(dv, mix[2].argmax(1))
            okp = int(np.sum(mix[1].argmax(1) == pe["y"]))
            print(f"   mixed with r26 ({w}): gen_val {np.mean(mix[0].argmax(1)[mv] == va['y'][mv])*100:.1f}%  "
                  f"penn {okp/len(pe['y'])*100:.1f}% ({okp})  dev spans {sp[0]}/{sp[1]} c' {sp[2]*100:.1f}% "
                  f"outside other {sp[3]*100:.1f}%; per class: {per_class(pe, mix[1].argmax(1))}")
        runs.append((Pv, Pp, Pd))
        report(f"{spec} trunc {a.trunc}", f"{spec} Penn windows (causal history)", Pv, Pp, Pd,
               f"  [{time.time()-t:.0f}s]")
    if a.average and len(runs) > 1:
        # all variants of this invocation averaged (an ensemble of heads)
        Pv, Pp, Pd = (np.mean([r[i] for r in runs], 0) for i in range(3))
        report(f"average of {len(runs)} heads", "average of heads, Penn windows (causal history)", Pv, Pp, Pd)
    if a.show_dev and runs:
        # per dev clip where they differ: span (^ inside, x well outside), the committed model, the head(s)
        Pd = np.mean([r[2] for r in runs], 0) if a.average else runs[-1][2]
        ab = lambda p: "".join("JLBSPo"[i] for i in p)
        for s, f in enumerate(dv["files"]):
            sl = slice(dv["off"][s], dv["off"][s + 1])
            r, h = dv["P"][sl].argmax(1), Pd[sl].argmax(1)
            if (r != h).any():
                marks = "".join("^" if u else ("x" if o else " ") for u, o in zip(dv["use"][sl], dv["outside"][sl]))
                print(f"{f} ({LABELS[int(dv['y'][sl][0])]})\n   span {marks}\n   r26  {ab(r)}\n   head {ab(h)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["embed", "heads"])
    ap.add_argument("--seed", type=int, default=20265000)
    ap.add_argument("--clips", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--trunc", type=float, default=0.3)
    ap.add_argument("--force", action="store_true", help="embed: regenerate the generated sets too")
    ap.add_argument("--average", action="store_true", help="heads: also report the mean of all variants")
    ap.add_argument("--show-dev", action="store_true", help="heads: per-window dev decisions vs the committed model")
    ap.add_argument("--variants", default="EL,6,resL,32;EL,6,resL,32,1;EL,6,resL,32,2;EL,6,resL,32,3")
    a = ap.parse_args()
    embed(a) if a.what == "embed" else heads(a)


if __name__ == "__main__":
    main()
