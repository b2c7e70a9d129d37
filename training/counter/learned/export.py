"""Int8 export and per-frame cost of the learned counter's network (seventh round, issue 9).

    python training/counter/learned/export.py --model DIR

Writes model_int8.tflite into the model directory (full-integer weights and activations, float32
input and output, calibrated on generated sequences only), prints its size, the time of one
invoke (one frame: the live counter runs the window ending at each new frame) with one thread,
and the largest difference from the float model's outputs on generated windows.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--frames", type=int, default=3000)
    a = ap.parse_args()
    import tensorflow as tf
    import keras
    model = keras.models.load_model(os.path.join(a.model, "model.keras"), compile=False)
    W = model.input_shape[1]
    conv_model = model
    bj = os.path.join(a.model, "build.json")
    if os.path.exists(bj):
        # learned8 --core: the same net rebuilt with batch 1, so that its Reshapes are static (no
        # SHAPE / STRIDED_SLICE / PACK in the file: posewatch's inference core has none of them)
        import json
        import train_net
        cfg = json.load(open(bj))
        train_net.WINDOW = cfg["window"]
        conv_model = train_net.build_core(tf, tuple(cfg["widths"]), cfg["dense"], batch=1)
        conv_model.set_weights(model.get_weights())
    seqs = gen.dataset(4242, 20)
    X = np.concatenate([gen.windows(s["x"], W) for s in seqs])
    rng = np.random.default_rng(0)
    calib = X[rng.choice(len(X), 1000, replace=False)]

    def rep():
        for x in calib:
            yield [x[None].astype(np.float32)]

    conv = tf.lite.TFLiteConverter.from_keras_model(conv_model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = rep
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    blob = conv.convert()
    path = os.path.join(a.model, "model_int8.tflite")
    with open(path, "wb") as f:
        f.write(blob)
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        Interpreter = tf.lite.Interpreter
    it = Interpreter(model_path=path, num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    ops = sorted({d["op_name"] for d in it._get_ops_details()})
    test = X[rng.choice(len(X), a.frames, replace=False)]
    ys = np.zeros((len(test), 3), np.float32)
    for i in range(50):
        it.set_tensor(inp["index"], test[i:i + 1]); it.invoke()
    t0 = time.perf_counter()
    for i, x in enumerate(test):
        it.set_tensor(inp["index"], x[None])
        it.invoke()
        ys[i] = it.get_tensor(out["index"])[0]
    dt = (time.perf_counter() - t0) / len(test)
    ref = model.predict(test, batch_size=2048, verbose=0)
    print(f"{path}: {len(blob)} bytes, ops {ops}")
    print(f"per frame (set_tensor + invoke + get_tensor, 1 thread, {len(test)} frames): {dt * 1e3:.3f} ms")
    print(f"int8 vs float: max |Δ| cos/sin {np.abs(ys[:, :2] - ref[:, :2]).max():.3f}, p {np.abs(ys[:, 2] - ref[:, 2]).max():.3f}; "
          f"mean |Δ| p {np.abs(ys[:, 2] - ref[:, 2]).mean():.4f}")


if __name__ == "__main__":
    main()
