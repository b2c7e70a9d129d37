#!/usr/bin/env python3
"""posewatch action classifier recipe: generate -> normalise -> train -> int8 TFLite + metadata.

    python training/train.py [--seed N] [--clips N] [--out Sources/CActionModel/action_classifier.tflite]
"""
import argparse, hashlib, json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np
from config import FPS, WINDOW, STRIDE, SEED, JOINTS, LABELS
from posegen.dataset import make_windows
from posegen.actions import VARIANT_NAMES
import normalize as NZ
import tflite_metadata as TM


def gen(seed, clips, per_clip=4, variants=()):
    """generated windows, normalised; `variants`: the named generator variants too (posegen/actions.py
    VARIANTS; none: the members' data of r26..r33 bit for bit)"""
    import posegen.actions as A
    rng = np.random.default_rng(seed)
    with A.variants(variants):
        X, y, _ = make_windows(rng, clips, WINDOW, FPS, per_clip=per_clip)
    return NZ.normalize_windows(X), y


def build_model(tf, widths=(48, 64, 96, 96), dense=64):
    k = tf.keras
    inp = k.Input((WINDOW, 3 * NZ.NJ), name="poses")
    x = k.layers.Conv1D(widths[0], 5, padding="same", activation="relu")(inp)
    x = k.layers.Conv1D(widths[1], 5, padding="same", activation="relu")(x)
    x = k.layers.MaxPooling1D(2)(x)
    x = k.layers.Conv1D(widths[2], 3, padding="same", activation="relu")(x)
    x = k.layers.MaxPooling1D(2)(x)
    x = k.layers.Conv1D(widths[3], 3, padding="same", activation="relu")(x)
    x = k.layers.GlobalAveragePooling1D()(x)
    x = k.layers.Dropout(0.3)(x)
    x = k.layers.Dense(dense, activation="relu")(x)
    x = k.layers.Dense(len(LABELS))(x)
    out = k.layers.Softmax(name="probs")(x)
    return k.Model(inp, out)


def mirror_twin(tf, member):
    """The member applied to the left/right mirror of its input (normalize.mirror_normalized), as a
    model sharing every layer with it except the first convolution, whose kernel has its input
    channels permuted (left <-> right joints) and negated on x. A convolution is linear in its input,
    so conv(mirror(z), W) = conv(z, W o mirror) exactly: the twin needs no op beyond the member's and
    adds only one conv kernel to the file (the converter stores shared weights once)."""
    k = tf.keras
    layers = [l for l in member.layers if not isinstance(l, k.layers.InputLayer)]
    first = layers[0]
    W, b = first.get_weights()
    src = np.array([NZ.MIRROR[c // 3] * 3 + c % 3 for c in range(3 * NZ.NJ)])
    sign = np.array([-1.0 if c % 3 == 0 else 1.0 for c in range(3 * NZ.NJ)], np.float32)
    twin_conv = k.layers.Conv1D(first.filters, first.kernel_size, padding=first.padding,
                                activation=first.activation, name=first.name + "_mirror")
    inp = k.Input((WINDOW, 3 * NZ.NJ))
    x = twin_conv(inp)
    twin_conv.set_weights([W[:, src, :] * sign[None, :, None], b])
    for l in layers[1:]:
        x = l(x)
    return k.Model(inp, x, name=member.name + "_mirror")


# ---------------------------------------------------------------- decision-history second stage (r30)
# Per window the members give an "entry" of 2 x dense + 7 values (263 with the default dense 128):
# each member's hidden dense output averaged with its mirror twin's, the four branches' mean logits
# times LOGIT_SCALE (6) and a flag (1: the decision exists). The history input holds the previous K
# entries of the same run, oldest first; rows without a decision are all zero (flag 0).
# LOGIT_SCALE keeps the logits' range (about -40..+45) near the embedding's (0..28): the entry is
# one int8 tensor with one scale.
LOGIT_SCALE = 0.25
# r32 "--head-base logprobs" (screened, not adopted: r29's +0.8 points on Penn did not carry over,
# docs/history.md): the heads' correction is added to log(mean of the four branches'
# probabilities + PROB_FLOOR) instead of to their mean logits. The floor is one step of the int8
# softmax output (1/256): a probability the int8 graph rounds to 0 still has a finite log, the same
# in float training as in the file (LOG's int8 table).
PROB_FLOOR = 1 / 256


def head_base(tf, logits, base, axis=0):
    """the value a head's correction is added to, from the branches' logits (a tensor, the branches
    along `axis`, kept as size 1): their mean ("logits") or the log of their mean probability plus
    PROB_FLOOR ("logprobs")"""
    if base == "logits":
        return tf.reduce_mean(logits, axis, keepdims=True)
    return tf.math.log(tf.reduce_mean(tf.nn.softmax(logits), axis, keepdims=True) + PROB_FLOOR)


def branch_outputs(tf, model, x):
    """(hidden, logits) of a member or twin applied to tensor x (its layers in order; the hidden
    layer is the Dense before the logits)."""
    k = tf.keras
    dense = []
    for l in [l for l in model.layers if not isinstance(l, k.layers.InputLayer)]:
        if isinstance(l, k.layers.Softmax):
            break
        x = l(x)
        if isinstance(l, k.layers.Dense):
            dense.append(x)
    return dense[-2], dense[-1]


def entry_model(tf, members, twins, base="logits"):
    """Keras: poses -> (entry without the flag (134), the heads' base (6): the branches' mean logits
    or the log of their mean probability, see head_base), all in float."""
    k = tf.keras
    inp = k.Input((WINDOW, 3 * NZ.NJ), name="poses")
    emb, logits = [], []
    for mm, tw in zip(members, twins):
        h1, l1 = branch_outputs(tf, mm, inp)
        h2, l2 = branch_outputs(tf, tw, inp)
        emb.append(k.layers.Average()([h1, h2]))
        logits += [l1, l2]
    lg = k.layers.Average(name="mean_logits")(logits)
    lgs = k.layers.Rescaling(LOGIT_SCALE)(lg)
    if base == "logits":
        return k.Model(inp, [k.layers.Concatenate()(emb + [lgs]), lg])
    # the branches' logits stacked [N, 4, 6], reduced over the branches as the compact graph does
    b = k.layers.Lambda(lambda t: head_base(tf, tf.stack(t, 1), base, axis=1)[:, 0])(logits)
    return k.Model(inp, [k.layers.Concatenate()(emb + [lgs]), b])


def history_arrays(E, lens, K):
    """E (N, F-1) entries of consecutive sequences of lengths `lens` -> (H (N, K, F), cur (N, F)):
    per window the previous K entries of its sequence (oldest first, zero rows and flag 0 before the
    sequence's start) and its own entry (flag 1)."""
    N, F = len(E), E.shape[1] + 1
    cur = np.concatenate([E, np.ones((N, 1), np.float32)], 1)
    H = np.zeros((N, K, F), np.float32)
    off = np.concatenate([[0], np.cumsum(lens)])
    for s in range(len(lens)):
        a, b = off[s], off[s + 1]
        for h in range(1, K + 1):  # slot K - h = h decisions ago
            if b - a > h:
                H[a + h:b, K - h] = cur[a:b - h]
    return H, cur


def bounded(tf, corr, bound):
    """the heads' correction, bound * tanh(corr / bound) when bound > 0 (r32 screening: keeps the
    int8 range of the final logits small, so that near-ties are decided at a finer step)"""
    return bound * tf.math.tanh(corr / bound) if bound > 0 else corr


def build_head(tf, K, F, width, dense, bound=0.0):
    """r29's "resL" head: a per-slot projection (shared over the K + 1 slots), a dense layer over
    all slots, a correction (optionally bounded) added to the current window's base (head_base:
    the mean logits unless --head-base logprobs), softmax."""
    k = tf.keras
    hin = k.Input((K + 1, F))
    lg = k.Input((len(LABELS),))
    x = k.layers.Conv1D(width, 1, activation="relu")(hin)
    # a reshape to (-1, n): Flatten and Reshape read the batch size (SHAPE/STRIDED_SLICE/PACK ops)
    x = k.layers.Lambda(lambda t: tf.reshape(t, (-1, (K + 1) * width)))(x)
    x = k.layers.Dropout(0.2)(x)
    x = k.layers.Dense(dense, activation="relu")(x)
    corr = k.layers.Dense(len(LABELS), kernel_initializer="zeros")(x)
    if bound > 0:
        corr = k.layers.Lambda(lambda t: bounded(tf, t, bound))(corr)
    return k.Model([hin, lg], k.layers.Softmax()(k.layers.Add()([lg, corr])))


def compact_graph(tf, members, twins, heads, K, F, base="logits", bound=0.0):
    """The combined model as a tf.function over the trained weights, written for the int8 file's size
    (r31); the same function as train_history's Keras graph in float. Two changes of form only:
    * each member and its mirror twin run as one batch of two after their first convolutions (the
      twin's permuted kernel), so every later layer, its int32 biases, per-channel scales and
      activation tensors are stored once instead of twice (the Keras twin shares the float weights,
      but the converter quantizes its path separately);
    * convolutions run on [batch, 1, time, channels] throughout, so the graph has none of the
      EXPAND_DIMS/RESHAPE pairs that Keras' Conv1D lowers to around every CONV_2D.
    Returns a tf.function (poses [1, WINDOW, 39], history [1, K, F]) -> (probs [1, 6], state [1, F])."""
    k = tf.keras
    C = 3 * NZ.NJ

    def steps(model):
        """the layers as ("conv" | "pool" | "mean" | "dense", weights or pool size), read eagerly"""
        out = []
        for l in model.layers:
            if isinstance(l, k.layers.Conv1D):
                W, b = l.get_weights()
                out.append(("conv", (W[None], b)))  # [1, k, in, out]: a CONV_2D over [batch, 1, time, in]
            elif isinstance(l, k.layers.MaxPooling1D):
                out.append(("pool", (l.pool_size[0], l.strides[0])))
            elif isinstance(l, k.layers.GlobalAveragePooling1D):
                out.append(("mean", None))
            elif isinstance(l, k.layers.Dense):
                out.append(("dense", tuple(l.get_weights())))
            elif not isinstance(l, (k.layers.InputLayer, k.layers.Dropout, k.layers.Softmax, k.layers.Lambda, k.layers.Add)):
                # (the head's reshape and its add of the logits are written out in graph())
                raise ValueError(f"compact_graph: no rule for {l}")
        return out

    def run(y, layer_steps, relu_last):
        for n, (kind, w) in enumerate(layer_steps):
            relu = relu_last or n < len(layer_steps) - 1
            if kind == "conv":
                y = tf.nn.conv2d(y, w[0], strides=1, padding="SAME") + w[1]
            elif kind == "dense":
                y = tf.matmul(y if y.shape.rank == 2 else tf.reshape(y, [y.shape[0], -1]), w[0]) + w[1]
            elif kind == "pool":
                y = tf.nn.max_pool2d(y, [1, w[0]], [1, w[1]], "VALID")
            else:
                y = tf.reduce_mean(y, [1, 2])
            if relu and kind in ("conv", "dense"):
                y = tf.nn.relu(y)
        return y

    branches = [(steps(mm), steps(tw)[0]) for mm, tw in zip(members, twins)]
    head_steps = [steps(hd) for hd in heads]

    def members_part(poses):
        """-> (the entry without its flag [1, F - 1], the heads' base [1, 6] (head_base))"""
        x = tf.reshape(poses, [1, 1, WINDOW, C])
        hidden, logits = [], []
        for member, twin_first in branches:
            # [2, 1, T, c]: the member's and the twin's first convolution, then all later layers once
            y = tf.concat([run(x, member[:1], True), run(x, [twin_first], True)], 0)
            h = run(y, member[1:-1], True)
            hidden.append(tf.reduce_mean(h, 0, keepdims=True))  # member and twin averaged
            logits.append(run(h, member[-1:], False))
        logits = tf.concat(logits, 0)  # [4, 6]: the four branches
        lg = tf.reduce_mean(logits, 0, keepdims=True)  # their mean logits (the entry holds them)
        return tf.concat(hidden + [lg * LOGIT_SCALE], 1), head_base(tf, logits, base)

    @tf.function(input_signature=[tf.TensorSpec([1, WINDOW, C], tf.float32, name="poses"),
                                  tf.TensorSpec([1, K, F], tf.float32, name="history")])
    def graph(poses, history):
        e, lg = members_part(poses)
        state = tf.concat([e, tf.ones([1, 1])], 1)
        slots = tf.reshape(tf.concat([history, tf.reshape(state, [1, 1, F])], 1), [1, 1, K + 1, F])
        probs = [tf.nn.softmax(lg + bounded(tf, run(slots, hs, False), bound)) for hs in head_steps]
        p = probs[0] if len(probs) == 1 else tf.reduce_mean(tf.concat(probs, 0), 0, keepdims=True)
        return {"probs": p, "state": state}
    return graph


def sequence_entries(em, seed, clips, keep_windows=False, olympic=0.0, variants=()):
    """make_sequences (in chunks: all raw windows at once would need gigabytes) -> entries through
    the float members, labels, use mask, sequence lengths. `olympic` > 0: the Olympic lifts' weight
    among the `other` activities of these sequences (the generator's, which the members train on,
    is 2.6; see --sequence-olympic). `variants`: the named r34 generator variants too (--sequence-variants)."""
    from posegen.dataset import make_sequences
    import posegen.actions as A
    with A.other_weights(**({"o_olympic": olympic} if olympic > 0 else {})), A.variants(variants):
        rng = np.random.default_rng(seed)
        E, L, y, use, lens, kept = [], [], [], [], [], []
        for c in range(0, clips, 1000):
            seqs = make_sequences(rng, min(1000, clips - c), WINDOW, FPS, STRIDE)
            W = NZ.normalize_windows(np.concatenate([w for w, _, _ in seqs]))
            e, lg = em.predict(W, batch_size=2048, verbose=0)
            if keep_windows and not kept:
                kept.append(W)  # the first chunk's normalised windows (export calibration, checks)
            E.append(e); L.append(lg)
            y += [t for _, t, _ in seqs]; use += [u for _, _, u in seqs]; lens += [len(t) for _, t, _ in seqs]
        out = np.concatenate(E), np.concatenate(L), np.concatenate(y), np.concatenate(use), np.array(lens)
    return out + (kept,) if keep_windows else out


def cached_entries(a, em, seed, clips, keep_windows=False):
    """sequence_entries, saved in / loaded from --members-cache (dev: they depend only on the
    members, the seed, the clip count and the head base; 3 minutes of every run)"""
    if not a.members_cache:
        return sequence_entries(em, seed, clips, keep_windows, a.sequence_olympic, a.sequence_variants)
    path = os.path.join(a.members_cache, f"entries-{seed}-{clips}-{a.head_base}-olympic{a.sequence_olympic:g}"
                        + "".join(f"-{v}" for v in a.sequence_variants) + ".npz")
    if not os.path.exists(path):
        out = sequence_entries(em, seed, clips, keep_windows, a.sequence_olympic, a.sequence_variants)
        np.savez(path, *out[:5], *(out[5] if keep_windows else []))  # arr_5: the kept windows
    d = np.load(path)
    out = tuple(d[f"arr_{i}"] for i in range(5))
    return out + ([d["arr_5"]],) if keep_windows else out


def to_int8(tf, conv, rep, shorten_names=True):
    """Full-integer conversion (float32 in and out: QUANTIZE/DEQUANTIZE at the edges, int8 inside)
    with `conv`, a TFLiteConverter, calibrated on `rep`, the representative inputs it expects. The
    window-only export keeps the converter's tensor names, so that it writes r26's file unchanged."""
    conv.representative_dataset = lambda: iter(rep)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.float32
    conv.inference_output_type = tf.float32
    raw = conv.convert()
    return TM.shorten_tensor_names(raw) if shorten_names else raw


def train_history(tf, a, members, twins):
    """-> (combined Keras model, the same as compact_graph or None (--graph keras), representative
    inputs): r29's second stage, `--heads` heads averaged."""
    k = tf.keras
    K = a.history_length
    em = entry_model(tf, members, twins, a.head_base)
    t = time.time()
    Etr, Ltr, ytr, utr, ltr = cached_entries(a, em, a.seed + 5000, a.sequence_clips)
    Eva, Lva, yva, uva, lva, va_windows = cached_entries(a, em, a.seed + 5001, a.sequence_clips // 5, True)
    print(f"history: sequences train {len(ytr)} windows ({len(ltr)} clips) val {len(yva)} in {time.time()-t:.0f}s "
          f"sha256(train entries)={hashlib.sha256(Etr.tobytes()).hexdigest()[:16]}", flush=True)
    Htr, Ctr = history_arrays(Etr, ltr, K)
    Hva, Cva = history_arrays(Eva, lva, K)
    F = Ctr.shape[1]
    heads, pva = [], []
    for h in range(a.heads):
        hseed = a.seed + 5100 + h
        tf.keras.utils.set_random_seed(hseed)
        rng = np.random.default_rng(hseed)
        # older history randomly forgotten in 30 % of the samples (as after start-up or an absence)
        keep = np.where(rng.random(len(Htr)) < 0.3, rng.integers(0, K, len(Htr)), K)
        mask = (np.arange(K)[None, :] >= (K - keep)[:, None])[:, :, None]
        X = np.concatenate([Htr * mask, Ctr[:, None]], 1)[utr]
        y = ytr[utr]
        cw = len(y) / (len(LABELS) * np.bincount(y, minlength=len(LABELS)))
        head = build_head(tf, K, F, a.head_width, a.head_dense, a.head_bound)
        steps = int(np.ceil(len(y) / 256)) * a.head_epochs
        lr = tf.keras.optimizers.schedules.CosineDecay(2e-3, steps, alpha=0.05)
        head.compile(tf.keras.optimizers.Adam(lr), tf.keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
        head.fit([X, Ltr[utr]], y, batch_size=256, epochs=a.head_epochs, shuffle=True, verbose=0,
                 class_weight={i: float(c) for i, c in enumerate(cw)})
        del X
        pva.append(head.predict([np.concatenate([Hva, Cva[:, None]], 1), Lva], batch_size=2048, verbose=0))
        print(f"history head {h}: val {np.mean(pva[-1].argmax(1)[uva] == yva[uva])*100:.1f}%", flush=True)
        heads.append(head)
    pm = np.mean(pva, 0)
    print(f"history heads averaged: val {np.mean(pm.argmax(1)[uva] == yva[uva])*100:.1f}% "
          f"(members alone {np.mean(Lva.argmax(1)[uva] == yva[uva])*100:.1f}%)", flush=True)
    # the combined graph: poses + history in, probabilities + this window's entry out
    poses = k.Input((WINDOW, 3 * NZ.NJ), name="poses")
    hist = k.Input((K, F), name="history")
    e, lg = em(poses)
    # the flag: a constant 1 from a zero-weight dense layer (its bias), so the graph needs no FILL op
    flag = k.layers.Dense(1, kernel_initializer="zeros", bias_initializer="ones", name="flag")(lg)
    state = k.layers.Concatenate(name="state")([e, flag])
    slots = k.layers.Concatenate(axis=1)([hist, k.layers.Lambda(lambda t: tf.reshape(t, (-1, 1, F)))(state)])
    outs = [hd([slots, lg]) for hd in heads]
    # the heads' probabilities averaged, as r29 measured them (not one softmax over mean logits)
    probs = k.layers.Average(name="probs")(outs) if len(outs) > 1 else outs[0]
    model = k.Model([poses, hist], [probs, state])
    # check: the graph reproduces the heads (and its state the entries) on validation windows
    Wva = va_windows[0]
    pg, sg = model.predict([Wva, Hva[:len(Wva)]], batch_size=1024, verbose=0)
    d = max(np.abs(pg - pm[:len(Wva)]).max(), np.abs(sg - Cva[:len(Wva)]).max())
    print(f"combined float graph vs heads: max difference {d:.2e}")
    assert d < 1e-4, "the combined graph does not reproduce the heads"
    # representative inputs for the int8 export: validation windows with their real histories
    rng = np.random.default_rng(a.seed + 5007)
    idx = rng.choice(len(Wva), a.calibration, replace=False)
    graph = None
    if a.graph == "compact":
        graph = compact_graph(tf, members, twins, heads, K, F, a.head_base, a.head_bound)
        d = 0.0
        for i in range(256):
            o = graph(tf.constant(Wva[i:i + 1]), tf.constant(Hva[i:i + 1]))
            d = max(d, np.abs(o["probs"].numpy() - pg[i:i + 1]).max(), np.abs(o["state"].numpy() - sg[i:i + 1]).max())
        print(f"compact graph vs the Keras graph: max difference {d:.2e}")
        assert d < 1e-4, "the compact graph is not the Keras graph"
    return model, graph, [(Wva[i], Hva[i]) for i in idx]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--clips", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--members", type=int, default=2, help="ensemble size (probabilities averaged in one graph)")
    # member width: the four conv layers' channels and the hidden dense layer. r39 (issue 41, decision 5:
    # up to 1 MiB): 96,128,192,192 / 128 with the variants below learns them without losing Penn;
    # r26..r37 used 48,64,96,96 / 64 (the file < 256 KB)
    ap.add_argument("--widths", default="96,128,192,192")
    ap.add_argument("--dense", type=int, default=128)
    # test-time mirror averaging inside the graph: each member also sees the left/right mirror of the
    # window (a person filmed from the other side) and the graph averages all outputs (r26)
    ap.add_argument("--no-mirror", dest="mirror", action="store_false")
    # r30: a second stage over the decision history (see train_history); --no-history writes r26
    ap.add_argument("--no-history", dest="history", action="store_false")
    ap.add_argument("--history-length", type=int, default=6, help="previous decisions the heads see (K)")
    # r31: two heads of width 32 / dense 56 (r30: four of 8 / 32 in the Keras graph; r29 screened 32 / 64)
    ap.add_argument("--heads", type=int, default=2, help="history heads, probabilities averaged")
    ap.add_argument("--head-width", type=int, default=32, help="per-slot projection of a head")
    ap.add_argument("--head-dense", type=int, default=56, help="a head's hidden dense layer")
    ap.add_argument("--head-epochs", type=int, default=12)
    ap.add_argument("--head-base", choices=("logits", "logprobs"), default="logits",
                    help="what a head's correction is added to: the branches' mean logits (r30, r31) or "
                         "the log of their mean probability (r32 screening)")
    ap.add_argument("--graph", choices=("compact", "keras"), default="compact",
                    help="int8 file's graph: compact (r31: twins batched with their members, 4-D convolutions) or keras (r30)")
    # r32 screening (not adopted): the log-probability base (needs the core's LOG), a bounded
    # correction, the calibration set's size
    ap.add_argument("--head-bound", type=float, default=0.0, help="bound the heads' correction to +-B (tanh); 0: unbounded")
    ap.add_argument("--calibration", type=int, default=500, help="representative inputs of the int8 conversion")
    ap.add_argument("--float-out", metavar="PATH", help="dev: also write the graph unquantized (int8_fidelity.py compares the two)")
    ap.add_argument("--sequence-clips", type=int, default=20000, help="generated clips the heads train on")
    # r33: the heads are what tells a clean's catch and recovery (a front squat) or its jerk (a
    # split) from squats and lunges, by the pull before it, and the generator's mix gives them an
    # Olympic lift in ~2.5 % of their sequences (a tenth of `other`); 8 makes it ~6 % (a quarter).
    ap.add_argument("--sequence-olympic", type=float, default=8.0,
                    help="weight of the Olympic lifts among the `other` activities of the heads' training sequences "
                         "(r33: 8; 2.6 = the generator's own mix, which the members train on and r31 used)")
    # The heads' sequences and the members' clips also hold star jumps and jacks mixed with star jumps
    # (as jumping jacks), slow step jacks, lunges with the arms moving, sets in short bursts between
    # standing or talking and knee-cut framing: the robustness suite's failure classes (evaluate.py
    # --sections r). r34/r35 (the narrow members) learned them and lost Penn; r39's wider members keep
    # it (docs/history.md).
    def variant_list(text):
        return tuple(name for name in text.split(",") if name)
    ap.add_argument("--sequence-variants", type=variant_list, default=VARIANT_NAMES,
                    help="comma-separated generator variants in the heads' training sequences "
                         "(posegen/actions.py VARIANT_NAMES; default: all five; '': none, as r26..r33)")
    ap.add_argument("--member-variants", type=variant_list, default=VARIANT_NAMES,
                    help="comma-separated generator variants in the members' training clips (as --sequence-variants)")
    # dev: experiments on the second stage need not retrain the members (bit for bit the same each run)
    ap.add_argument("--members-cache", metavar="DIR", help="dev: load the members' weights (and the heads' training entries) from DIR if saved there, else compute and save them")
    # The model is embedded into the posewatch binary from Sources/CActionModel (see its header).
    ap.add_argument("--out", default=os.path.join(HERE, "..", "Sources", "CActionModel", "action_classifier.tflite"))
    a = ap.parse_args()
    t0 = time.time()
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(a.seed)
    tf.config.experimental.enable_op_determinism()

    Xva, yva = gen(a.seed + 1, max(500, a.clips // 10))
    members = []
    for m in range(a.members):
        # member m: its own generated data (seed + 1000*m; member 0 = the single-model recipe) and its
        # own initialisation; the exported graph averages the members' probabilities
        tf.keras.utils.set_random_seed(a.seed + 1000 * m)
        model = build_model(tf, tuple(int(w) for w in a.widths.split(",")), a.dense)
        cached = os.path.join(a.members_cache, f"member{m}.weights.h5") if a.members_cache else None
        if cached and os.path.exists(cached) and (a.history or m > 0):
            # (the window-only export calibrates on member 0's training data: that one is trained)
            model.load_weights(cached)
            print(f"member {m}: weights from {cached}", flush=True)
            members.append(model)
            continue
        t1 = time.time()
        Xtr, ytr = gen(a.seed + 1000 * m, a.clips, variants=a.member_variants)
        print(f"member {m}: generated train {Xtr.shape} {np.bincount(ytr)} val {Xva.shape} in {time.time()-t1:.0f}s "
              f"sha256(train)={hashlib.sha256(Xtr.tobytes()).hexdigest()[:16]}", flush=True)
        cw = len(ytr) / (len(LABELS) * np.bincount(ytr, minlength=len(LABELS)))
        steps = int(np.ceil(len(ytr) / 256)) * a.epochs
        lr = tf.keras.optimizers.schedules.CosineDecay(2e-3, steps, alpha=0.05)
        model.compile(tf.keras.optimizers.Adam(lr), tf.keras.losses.SparseCategoricalCrossentropy(),
                      metrics=["accuracy"])
        model.fit(Xtr, ytr, batch_size=256, epochs=a.epochs, shuffle=True, verbose=2,
                  validation_data=(Xva, yva), class_weight={i: float(c) for i, c in enumerate(cw)})
        members.append(model)
        if cached:
            os.makedirs(a.members_cache, exist_ok=True)
            model.save_weights(cached)
        if m == 0:
            rep_rng = np.random.default_rng(a.seed + 7)
            rep = Xtr[rep_rng.choice(len(Xtr), 500, replace=False)]
        del Xtr, ytr
    branches = members + ([mirror_twin(tf, mm) for mm in members] if a.mirror else [])
    if len(branches) == 1:
        model = members[0]
    else:
        k = tf.keras
        inp = k.Input((WINDOW, 3 * NZ.NJ), name="poses")
        model = k.Model(inp, k.layers.Average(name="probs_mean")([mm(inp) for mm in branches]))
        pva = model.predict(Xva, batch_size=1024, verbose=0)
        print("ensemble val accuracy:", float(np.mean(pva.argmax(1) == yva)))
        if a.mirror:
            # the twins make the float model mirror-symmetric: f(z) = f(mirror(z)) up to float rounding
            d = np.abs(pva - model.predict(NZ.mirror_normalized(Xva), batch_size=1024, verbose=0)).max()
            print(f"float model, max |f(z) - f(mirror z)| on the validation set: {d:.2e}")
            assert d < 1e-4, "mirror twins are not the members' mirror"
    if a.history:
        if not a.mirror or a.members < 1:
            sys.exit("--history needs the mirror twins (the entry averages each member with its twin)")
        export_history(tf, a, t0, *train_history(tf, a, members, branches[len(members):]))
        return
    t_train = time.time() - t0
    raw = to_int8(tf, tf.lite.TFLiteConverter.from_keras_model(model), [[r[None]] for r in rep], shorten_names=False)
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=raw)
    it.allocate_tensors()
    # quantization of the int8 tensor right after the input QUANTIZE op
    qin = qout = None
    for d in it.get_tensor_details():
        if d["dtype"] == np.int8 and qin is None and d["shape"].tolist() == [1, WINDOW, 3 * NZ.NJ]:
            qin = d["quantization"]
        if d["dtype"] == np.int8 and d["shape"].tolist() == [1, len(LABELS)]:
            qout = d["quantization"]
    meta = classifier_metadata(
        a, 1, {"scale": float(qin[0]), "zero_point": int(qin[1])} if qin else None,
        {"scale": float(qout[0]), "zero_point": int(qout[1])} if qout else None)
    blob, it2 = write_model(a, raw, meta)
    # verify: same outputs as before the metadata edit
    xi = Xva[:64]
    o1, o2 = [], []
    for interp, acc in ((it, o1), (it2, o2)):
        i, o = interp.get_input_details()[0]["index"], interp.get_output_details()[0]["index"]
        for r in xi:
            interp.set_tensor(i, r[None]); interp.invoke(); acc.append(interp.get_tensor(o)[0].copy())
    assert np.array_equal(np.array(o1), np.array(o2)), "outputs changed by the metadata edit"
    if a.mirror:
        # int8: mirrored inputs quantize slightly differently (zero point), so only nearly symmetric
        o3 = []
        for r in NZ.mirror_normalized(xi):
            it2.set_tensor(i, r[None]); it2.invoke(); o3.append(it2.get_tensor(o)[0].copy())
        print(f"int8 model, max |f(z) - f(mirror z)| on 64 validation windows: {np.abs(np.array(o2) - np.array(o3)).max():.4f}")
    report_written(a, blob, meta, t0, t_train)


def export_history(tf, a, t0, model, graph, rep):
    """int8 export of the two-input history model, its metadata (schema_version 2) and checks. The
    compact graph (r31) when given, else the Keras graph (r30's file)."""
    K, F = a.history_length, rep[0][1].shape[1]
    t_train = time.time() - t0

    def converter():
        if graph is not None:
            return tf.lite.TFLiteConverter.from_concrete_functions([graph.get_concrete_function()])
        return tf.lite.TFLiteConverter.from_keras_model(model)
    raw = to_int8(tf, converter(), [[w[None], h[None]] for w, h in rep] if graph is not None
                  else [{"poses": w[None], "history": h[None]} for w, h in rep])
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_content=raw)
    it.allocate_tensors()
    # the graph's inputs and outputs by shape (the converter does not keep the Keras order)
    ins, outs_ = {"poses": [1, WINDOW, 3 * NZ.NJ], "history": [1, K, F]}, {"probs": [1, len(LABELS)], "state": [1, F]}
    io = TM.io_by_shape(it, ins, outs_)
    q = {n: {"scale": float(v[0]), "zero_point": int(v[1])} for n, v in io["int8"].items()}
    meta = classifier_metadata(
        a, 2, q["poses"], q["probs"],
        history={
            "input": "history", "dtype": "float32", "shape": [1, K, F], "length": K, "features": F,
            "layout": f"[row r: {K} decisions ago - r ... 1 decision ago (last row)][feature]; index = r*{F} + f",
            "entry": f"features 0..{F - 8}: each member's hidden dense output averaged with its mirror twin's "
                     f"(member 0 then 1, {a.dense} each); {F - 7}..{F - 2}: the branches' mean logits x {LOGIT_SCALE}; "
                     f"{F - 1}: flag",
            "flag": "1 (as quantized in 'state') where the row holds a decision, 0 in an empty row",
            "state_output": "state", "state_shape": [1, F],
            "update": "after each classified window: drop row 0, move the rows up, the 'state' output becomes the last row",
            "cleared": "all rows zero (flags 0) at start and whenever a decision is not a classified window "
                       "(starting up, no person, window not full)",
            "int8_quantization": q["history"], "state_int8_quantization": q["state"]},
        history_heads={"heads": a.heads, "width": a.head_width, "dense": a.head_dense,
                       "epochs": a.head_epochs, "sequence_clips": a.sequence_clips,
                       "sequence_olympic_weight": a.sequence_olympic,
                       "seeds": f"seed + 5000 (sequences), seed + 5100 + head",
                       **({"base": f"log(mean of the branches' probabilities + {PROB_FLOOR})"}
                          if a.head_base == "logprobs" else {}),
                       **({"correction_bound": a.head_bound} if a.head_bound > 0 else {}),
                       **({"sequence_variants": list(a.sequence_variants)} if a.sequence_variants else {}),
                       # (only for r31's form, so that --graph keras with r30's head sizes writes r30's file)
                       **({"graph": "compact (twins batched with their members)"} if graph is not None else {})})
    blob, it2 = write_model(a, raw, meta)
    # same outputs before and after the metadata edit, chained as posewatch runs it
    outs = []
    for interp in (it, it2):
        d = TM.io_by_shape(interp, ins, outs_)
        h, acc = np.zeros((1, K, F), np.float32), []
        for w, _ in rep[:64]:
            interp.set_tensor(d["poses"], w[None]); interp.set_tensor(d["history"], h); interp.invoke()
            acc.append(interp.get_tensor(d["probs"])[0].copy())
            h = np.concatenate([h[:, 1:], interp.get_tensor(d["state"])[None]], 1)
        outs.append(np.array(acc))
    assert np.array_equal(outs[0], outs[1]), "outputs changed by the metadata edit"
    # int8 vs float on the representative inputs (their real histories)
    d = TM.io_by_shape(it2, ins, outs_)
    agree, pmax = 0, 0.0
    for w, hh in rep:
        it2.set_tensor(d["poses"], w[None]); it2.set_tensor(d["history"], hh[None]); it2.invoke()
        pf = model.predict([w[None], hh[None]], verbose=0)[0][0]
        pi = it2.get_tensor(d["probs"])[0]
        agree += int(pf.argmax() == pi.argmax()); pmax = max(pmax, float(np.abs(pf - pi).max()))
    print(f"int8 vs float on {len(rep)} calibration inputs: same argmax {agree}, max |dp| {pmax:.3f}; "
          f"state flag as quantized {it2.get_tensor(d['state'])[0][-1]:.4f}")
    report_written(a, blob, meta, t0, t_train)
    if a.float_out:
        # dev: the same graph unquantized, with the int8 file's metadata so that evaluate.py runs
        # it, to measure what int8 costs (training/int8_fidelity.py)
        with open(a.float_out, "wb") as f:
            f.write(TM.add_metadata(converter().convert(), meta))
        print("float twin (not quantized):", a.float_out)


def classifier_metadata(a, schema_version, quant_in, quant_out, history=None, history_heads=None):
    """The `posewatch.classifier` metadata entry (ClassifierMetadata in Swift reads it). A history
    model (schema_version 2) adds its `history` entry and its heads' recipe; a window-only model
    leaves both out, so that --no-history writes r26's file (and --no-mirror r25's) unchanged."""
    meta = {
        "name": TM.NAME, "schema_version": schema_version,
        "labels": LABELS, "frame_rate": FPS, "window_length": WINDOW, "stride": STRIDE,
        "joints": [JOINTS[i] for i in NZ.USED],
        "joints_coco17_indices": NZ.USED,
        "input": {"name": "poses", "dtype": "float32", "shape": [1, WINDOW, 3 * NZ.NJ],
                  "layout": f"[frame t oldest..newest][joint in 'joints' order][channel x,y,valid]; index = t*{3 * NZ.NJ} + j*3 + c",
                  "int8_quantization": quant_in,
                  "note": "float32 in; the model's first op QUANTIZEs to int8 with these parameters"},
        "output": {"dtype": "float32", "shape": [1, len(LABELS)], "meaning": "softmax probabilities in 'labels' order",
                   "int8_quantization": quant_out},
        "normalization": NZ.params(),
        "empty_pose": "a slot without a pose is 17 x (0,0,0) before normalisation",
        "decision_defaults": {"no_person_min_real_fraction": 0.6, "low_confidence_threshold": 0.6},
        "training": {"recipe": "training/train.py", "seed": a.seed, "clips": a.clips, "epochs": a.epochs,
                     "members": a.members,
                     # only when on, so that --no-mirror writes r25's metadata (and file) unchanged
                     **({"mirror_twins": True} if a.mirror else {}),
                     **({"member_variants": list(a.member_variants)} if a.member_variants else {}),
                     **({} if (a.widths, a.dense) == ("48,64,96,96", 64)
                        else {"widths": a.widths, "dense": a.dense}),
                     **({"history_heads": history_heads} if history_heads is not None else {}),
                     "data": "synthetic only (training/posegen)"},
    }
    if history is not None:
        meta["history"] = history
    return meta


def write_model(a, raw, meta):
    """Adds the metadata to the converted model, writes it to --out and checks that LiteRT loads the
    written file and that the metadata reads back. -> (file bytes, an interpreter on the file)."""
    from ai_edge_litert.interpreter import Interpreter
    blob = TM.add_metadata(raw, meta)
    with open(a.out, "wb") as f:
        f.write(blob)
    it2 = Interpreter(model_path=a.out)
    it2.allocate_tensors()
    back = TM.read_metadata(open(a.out, "rb").read())
    assert back == json.loads(json.dumps(meta)), "metadata mismatch"
    return blob, it2


def report_written(a, blob, meta, t0, t_train):
    """Prints the written model's ops, size, sha256 and timings, and rewrites the fingerprint header."""
    ops = TM.op_list(blob)
    from collections import Counter
    print("ops:", dict(Counter(ops)))
    digest = hashlib.sha256(blob).hexdigest()
    print("file:", a.out, len(blob), "bytes sha256", digest)
    write_fingerprint(a.out, digest)
    print(f"wall: train {t_train:.0f}s total {time.time()-t0:.0f}s")
    print("metadata:", json.dumps(meta))


def write_fingerprint(model_path, digest):
    """Beside the embedded model (Sources/CActionModel), rewrite classifier_fingerprint.h: the C
    file that embeds the model with `.incbin` includes it, so a changed model is re-assembled."""
    header = os.path.join(os.path.dirname(os.path.abspath(model_path)), "classifier_fingerprint.h")
    if not os.path.exists(header):
        return  # a model written elsewhere (an experiment) is not the embedded one
    text = open(header).read()
    lines = [l for l in text.splitlines() if not l.startswith("#define POSEWATCH_CLASSIFIER_SHA256 ")]
    lines.append(f'#define POSEWATCH_CLASSIFIER_SHA256 "{digest}"')
    with open(header, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("fingerprint:", header)


if __name__ == "__main__":
    main()
