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
import normalize as NZ
import tflite_metadata as TM


def gen(seed, clips, per_clip=4):
    rng = np.random.default_rng(seed)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--clips", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--members", type=int, default=2, help="ensemble size (probabilities averaged in one graph)")
    # member width: the four conv layers' channels and the hidden dense layer (the file must stay < 256 KB)
    ap.add_argument("--widths", default="48,64,96,96")
    ap.add_argument("--dense", type=int, default=64)
    # test-time mirror averaging inside the graph: each member also sees the left/right mirror of the
    # window (a person filmed from the other side) and the graph averages all outputs (r26)
    ap.add_argument("--no-mirror", dest="mirror", action="store_false")
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
        t1 = time.time()
        Xtr, ytr = gen(a.seed + 1000 * m, a.clips)
        print(f"member {m}: generated train {Xtr.shape} {np.bincount(ytr)} val {Xva.shape} in {time.time()-t1:.0f}s "
              f"sha256(train)={hashlib.sha256(Xtr.tobytes()).hexdigest()[:16]}", flush=True)
        model = build_model(tf, tuple(int(w) for w in a.widths.split(",")), a.dense)
        cw = len(ytr) / (len(LABELS) * np.bincount(ytr, minlength=len(LABELS)))
        steps = int(np.ceil(len(ytr) / 256)) * a.epochs
        lr = tf.keras.optimizers.schedules.CosineDecay(2e-3, steps, alpha=0.05)
        model.compile(tf.keras.optimizers.Adam(lr), tf.keras.losses.SparseCategoricalCrossentropy(),
                      metrics=["accuracy"])
        model.fit(Xtr, ytr, batch_size=256, epochs=a.epochs, shuffle=True, verbose=2,
                  validation_data=(Xva, yva), class_weight={i: float(c) for i, c in enumerate(cw)})
        members.append(model)
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
    t_train = time.time() - t0
    # ---- int8 export: float32 in/out, QUANTIZE/DEQUANTIZE at the edges, int8 inside
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([r[None]] for r in rep)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.float32
    conv.inference_output_type = tf.float32
    raw = conv.convert()
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
    meta = {
        "name": TM.NAME, "schema_version": 1,
        "labels": LABELS, "frame_rate": FPS, "window_length": WINDOW, "stride": STRIDE,
        "joints": [JOINTS[i] for i in NZ.USED],
        "joints_coco17_indices": NZ.USED,
        "input": {"name": "poses", "dtype": "float32", "shape": [1, WINDOW, 3 * NZ.NJ],
                  "layout": f"[frame t oldest..newest][joint in 'joints' order][channel x,y,valid]; index = t*{3 * NZ.NJ} + j*3 + c",
                  "int8_quantization": {"scale": float(qin[0]), "zero_point": int(qin[1])} if qin else None,
                  "note": "float32 in; the model's first op QUANTIZEs to int8 with these parameters"},
        "output": {"dtype": "float32", "shape": [1, len(LABELS)], "meaning": "softmax probabilities in 'labels' order",
                   "int8_quantization": {"scale": float(qout[0]), "zero_point": int(qout[1])} if qout else None},
        "normalization": NZ.params(),
        "empty_pose": "a slot without a pose is 17 x (0,0,0) before normalisation",
        "decision_defaults": {"no_person_min_real_fraction": 0.6, "low_confidence_threshold": 0.6},
        "training": {"recipe": "training/train.py", "seed": a.seed, "clips": a.clips, "epochs": a.epochs,
                     "members": a.members,
                     # only when on, so that --no-mirror writes r25's metadata (and file) unchanged
                     **({"mirror_twins": True} if a.mirror else {}),
                     **({} if (a.widths, a.dense) == ("48,64,96,96", 64)
                        else {"widths": a.widths, "dense": a.dense}),
                     "data": "synthetic only (training/posegen)"},
    }
    blob = TM.add_metadata(raw, meta)
    with open(a.out, "wb") as f:
        f.write(blob)
    # verify: LiteRT loads it, metadata reads back, same outputs as before the edit
    it2 = Interpreter(model_path=a.out)
    it2.allocate_tensors()
    back = TM.read_metadata(open(a.out, "rb").read())
    assert back == json.loads(json.dumps(meta)), "metadata mismatch"
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
