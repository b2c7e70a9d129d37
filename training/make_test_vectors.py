#!/usr/bin/env python3
"""Write testdata/classifier_vectors.json for the Swift port: raw windows (generated, seed-fixed;
plus edge cases), the pw-norm-v1 output (float32, exact) and LiteRT's output of the committed model.
A decision-history model (r30) gets each case with an empty history (all zero) and, under "chain",
consecutive windows of one generated clip, each with the previous invokes' entries as history.

    python training/make_test_vectors.py [--model Sources/CActionModel/action_classifier.tflite]
"""
import argparse, json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np
import normalize as NZ
import tflite_metadata as TM
from posegen.dataset import make_clip, make_sequences, LABELS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "..", "Sources", "CActionModel", "action_classifier.tflite"))
    ap.add_argument("--out", default=os.path.join(HERE, "testdata", "classifier_vectors.json"))
    a = ap.parse_args()
    rng = np.random.default_rng(4242)
    cases = []
    for lab in ["jumping_jacks", "squats", "push_ups", "other"]:
        k, _, _ = make_clip(rng, lab, 30, 15.0)
        cases.append((f"generated {lab}", k))
    k = cases[1][1].copy()
    k[:, [6, 12], 2] = 0.1  # one-sided: right shoulder and right hip below threshold
    cases.append(("one-sided shoulders/hips", k))
    k = cases[0][1].copy()
    k[:, [11, 12, 5, 6], 2] = 0.0  # no hips nor shoulders: centre = mean joint, scale = extent / 3
    cases.append(("no hips or shoulders", k))
    k = cases[2][1].copy()
    k[:20] = 0.0
    cases.append(("first 20 slots empty", k))
    cases.append(("empty window", np.zeros((30, 17, 3), np.float32)))
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    meta = TM.read_metadata(open(a.model, "rb").read())
    hist = meta.get("history")

    def runner(it):
        """-> run(z, h) = (probabilities, entry or None) for one window (and history)"""
        it.allocate_tensors()
        io = TM.classifier_io(it, meta)

        def run(z, h=None):
            it.set_tensor(io["poses"], z.reshape(1, 30, -1))
            if hist:
                it.set_tensor(io["history"], h if h is not None else np.zeros(hist["shape"], np.float32))
            it.invoke()
            return it.get_tensor(io["probs"])[0].copy(), (it.get_tensor(io["state"])[0].copy() if hist else None)
        return run

    run = runner(Interpreter(model_path=a.model, num_threads=1))
    # LiteRT's reference kernels are posewatch's oracle: its optimised kernels round some int8
    # steps differently (up to 0.13 apart on these windows), so both are recorded.
    ref = runner(Interpreter(model_path=a.model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF))
    fl = lambda x: [float(v) for v in np.asarray(x).ravel()]
    out = []
    for name, k in cases:
        k = k.astype(np.float32)
        z = NZ.normalize_windows(k[None])[0]
        assert np.array_equal(z.view(np.uint32), NZ.normalize_window_scalar(k).view(np.uint32))
        p, _ = run(z)
        r, e = ref(z)
        out.append({"name": name, "raw_T17x3": fl(k), "normalized": fl(z),
                    "litert_probs": fl(p), "litert_reference_probs": fl(r),
                    **({"litert_reference_entry": fl(e)} if hist else {})})
    doc = {"spec": NZ.SPEC_ID, "labels": LABELS, "window_length": 30, "note":
           "floats are the exact float32 values written as decimal; raw is [t][coco17 joint][x,y,score]",
           "cases": out}
    if hist:
        # one generated clip's consecutive windows (stride 5), longer than the history: the ring
        # fills and then drops rows; each history is built from the reference's previous entries
        W, _, _ = make_sequences(np.random.default_rng(4343), 1, 30, 15.0, 5, clip_s=(6.0, 6.5))[0]
        h = np.zeros(hist["shape"], np.float32)
        chain = []
        for k in W.astype(np.float32):
            z = NZ.normalize_windows(k[None])[0]
            r, e = ref(z, h)
            chain.append({"raw_T17x3": fl(k), "litert_reference_probs": fl(r), "litert_reference_entry": fl(e),
                          "history_rows_with_flag": int(np.sum(h[0, :, -1] != 0))})
            h = np.concatenate([h[:, 1:], e[None, None]], 1)
        doc["history"] = {"length": hist["length"], "features": hist["features"], "chain": chain,
                          "note": "cases: empty history; chain: in order, history = the previous entries"}
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    json.dump(doc, open(a.out, "w"))
    print("wrote", a.out, os.path.getsize(a.out), "bytes")


if __name__ == "__main__":
    main()
