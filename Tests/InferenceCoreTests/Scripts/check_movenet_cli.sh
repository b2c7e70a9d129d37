#!/bin/sh
# MoveNet end-to-end check through the CLI: N real frames, `posewatch model run` vs LiteRT BUILTIN_REF.
# Usage (from the package root, after `swift build -c release`):
#   Tests/InferenceCoreTests/Scripts/check_movenet_cli.sh [COUNT] [WORKDIR]
# Needs ../shared (model + clips), ffmpeg, and /work/venv (numpy + ai-edge-litert) or $PYTHON.
set -eu
COUNT=${1:-100}
WORK=${2:-/tmp/posewatch-movenet-check}
PYTHON=${PYTHON:-/work/venv/bin/python}
MODEL=../shared/models/movenet_singlepose_lightning_int8_4.tflite
HERE=$(dirname "$0")
mkdir -p "$WORK/out"
"$PYTHON" "$HERE/movenet_frames.py" --count "$COUNT" --per-frame-dir "$WORK" --goldens-out "$WORK/expected.npy"
i=0
while [ "$i" -lt "$COUNT" ]; do
  name=$(printf 'frame_%03d' "$i")
  .build/release/posewatch model run "$MODEL" --input "$WORK/$name.npy" --output "$WORK/out/$name.npy"
  i=$((i + 1))
done
"$PYTHON" - "$WORK" "$COUNT" <<'PY'
import sys, numpy as np
work, count = sys.argv[1], int(sys.argv[2])
expected = np.load(f"{work}/expected.npy")
ours = np.stack([np.load(f"{work}/out/frame_{i:03d}.npy") for i in range(count)])
diff = np.abs(ours.astype(np.float64) - expected.astype(np.float64))
print(f"frames: {count}  max abs difference: {diff.max()}  identical frames: {int((diff.reshape(count, -1).max(1) == 0).sum())}/{count}")
sys.exit(0 if diff.max() == 0 else 1)
PY
