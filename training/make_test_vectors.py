#!/usr/bin/env python3
"""Write testdata/classifier_vectors.json for the Swift port: raw windows (generated, seed-fixed;
plus edge cases), the pw-norm-v1 output (float32, exact) and LiteRT's output of the committed model.

    python training/make_test_vectors.py [--model Sources/CActionModel/action_classifier.tflite]
"""
import argparse, json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np
import normalize as NZ
from posegen.dataset import make_clip, LABELS


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
    it = Interpreter(model_path=a.model, num_threads=1)
    it.allocate_tensors()
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    # LiteRT's reference kernels are posewatch's oracle: its optimised kernels round some int8
    # steps differently (up to 0.13 apart on these windows), so both are recorded.
    ref = Interpreter(model_path=a.model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    ref.allocate_tensors()
    ri, ro = ref.get_input_details()[0]["index"], ref.get_output_details()[0]["index"]
    out = []
    for name, k in cases:
        k = k.astype(np.float32)
        z = NZ.normalize_windows(k[None])[0]
        assert np.array_equal(z.view(np.uint32), NZ.normalize_window_scalar(k).view(np.uint32))
        it.set_tensor(i, z.reshape(1, 30, -1)); it.invoke()
        p = it.get_tensor(o)[0]
        ref.set_tensor(ri, z.reshape(1, 30, -1)); ref.invoke()
        r = ref.get_tensor(ro)[0]
        out.append({"name": name, "raw_T17x3": [float(v) for v in k.ravel()],
                    "normalized": [float(v) for v in z.ravel()],
                    "litert_probs": [float(v) for v in p],
                    "litert_reference_probs": [float(v) for v in r]})
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    json.dump({"spec": NZ.SPEC_ID, "labels": LABELS, "window_length": 30, "note":
               "floats are the exact float32 values written as decimal; raw is [t][coco17 joint][x,y,score]",
               "cases": out}, open(a.out, "w"))
    print("wrote", a.out, os.path.getsize(a.out), "bytes")


if __name__ == "__main__":
    main()
