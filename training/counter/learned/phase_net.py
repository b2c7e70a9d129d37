"""The phase net posewatch embeds, run the way posewatch runs it, for the Python reference counter.

`outputs(poses)` → float32[T, 3] per frame (cos φ, sin φ, p(repeating)): gen.features, a window of the
last 45 rows (zero rows before the stream starts, as RepetitionPhaseNet's ring), each installed model
on LiteRT's reference kernels (bit-identical to posewatch's inference core), their outputs averaged
in float32 when there are several. The models are the ones in Sources/CRepetitionModel
(install_model.py puts them there). Needs ai_edge_litert (the development venv; training/README.md).
Cached per model set and pose array under $PHASE_CACHE (default /tmp/posewatch-phase-cache).
"""
from __future__ import annotations

import glob
import hashlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
INSTALLED = os.path.join(ROOT, "Sources", "CRepetitionModel")
WINDOW = 45
CACHE = os.environ.get("PHASE_CACHE", "/tmp/posewatch-phase-cache")


def installed_models():
    """The models posewatch embeds, in the order it averages them."""
    return sorted(glob.glob(os.path.join(INSTALLED, "repetition_phase*.tflite")))


class PhaseNet:
    """One model or several averaged (paths), on LiteRT's reference kernels, one invoke per frame."""

    def __init__(self, paths=None):
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
        self.paths = list(paths) if paths else installed_models()
        if not self.paths:
            raise FileNotFoundError(f"no repetition_phase*.tflite in {INSTALLED}")
        self.interpreters = []
        digest = hashlib.sha256()
        for path in self.paths:
            with open(path, "rb") as f:
                digest.update(f.read())
            it = Interpreter(model_path=path, num_threads=1, experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
            it.allocate_tensors()
            self.interpreters.append((it, it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]))
        self.tag = digest.hexdigest()[:16]

    def outputs(self, poses):
        poses = np.ascontiguousarray(poses, np.float32)
        key = hashlib.sha256(poses.tobytes()).hexdigest()[:24]
        path = os.path.join(CACHE, f"{self.tag}_{key}.npy")
        if os.path.exists(path):
            return np.load(path)
        windows = gen.windows(gen.features(poses), WINDOW)
        total = None
        for it, inp, out in self.interpreters:
            ys = np.zeros((len(windows), 3), np.float32)
            for t in range(len(windows)):
                it.set_tensor(inp, windows[t:t + 1])
                it.invoke()
                ys[t] = it.get_tensor(out)[0]
            total = ys if total is None else total + ys
        result = (total / np.float32(len(self.interpreters))).astype(np.float32)
        os.makedirs(CACHE, exist_ok=True)
        np.save(path, result)
        return result


_DEFAULT = None


def outputs(poses):
    """The installed models' outputs for a pose array (float[T, 17, 3], pixels or normalised)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = PhaseNet()
    return _DEFAULT.outputs(poses)
