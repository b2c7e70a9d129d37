#!/usr/bin/env bash
# Home-conditions scoring: how posewatch holds up on the development clips (../shared/data/videos)
# under conditions a home camera meets. Each exerciser clip of labels.csv (the five exercises; files
# that exist) is rebuilt with ffmpeg per condition, replayed through `posewatch replay`, and scored
# in one table: span-majority label right, count MAE/OBO, repetitions counted, share of time with no
# person, non-zero exits (and, for the second-person rows, the count precision). A PASS/FAIL section
# checks the targets:
#   second_left / second_right  a second person (an other/ clip) beside the exerciser, both at half size,
#                               against the exerciser alone at the same place and scale (alone_half_right /
#                               alone_half_left): spans within 1, count MAE within 0.05, reps <= 1.15 x alone
#   dim                         eq=brightness=-0.25:contrast=0.5,noise=alls=20:allf=t: spans within 2 of as_filmed
#   rot90_fixed                 transpose=1 replayed with [camera] rotation = 270: within 1 of as_filmed
#                               (rot90, the same file without the config, is shown but has no target)
#   half, shaky, fps10, mjpeg_q25   half size, hand-held shake, 10 fps, MJPEG at -q:v 25: within 1 of as_filmed
# The conditions and the scoring are described in home_conditions.py's docstring (--help).
#
# Usage (from the repository root; needs ffmpeg, python3, a built .build/release/posewatch):
#   Tests/Scoring/home_conditions.sh                       # all 36 exerciser clips, all 12 conditions
#   Tests/Scoring/home_conditions.sh --only wahoo --per-clip
#   Tests/Scoring/home_conditions.sh --conditions dim,rot90_fixed --jobs 4
#   Tests/Scoring/home_conditions.sh -- --no-smart-cropping   # extra arguments for posewatch replay
# Options: --labels CSV, --only TEXT (substring of the file), --conditions a,b,c (as_filmed and the
# matching alone rows are added), --posewatch PATH, --pose-model PATH (default ../shared/models' MoveNet),
# --cache DIR (default /tmp/posewatch-home-cache; converted clips, keyed by clip, condition and ffmpeg
# command, about 9.5 GB for the whole set), --jobs N (default 2), --timeout S (default 120: a longer
# replay counts as hung, exit 124), --per-clip. The run replays a copy of the binary taken at the start,
# so a rebuild during the run does not mix two builds.
#
# Time on a 2-core x86 machine (also building), --jobs 2: about 10 min the first time (the ffmpeg
# conversions take ~5 min), 3.5 to 9 min with the cache filled (432 replays, 0.2 to 15 s each; the
# spread is the load of other work on the machine).
# Without ../shared/data/videos it prints "skipped" and exits 0.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec python3 "$here/home_conditions.py" "$@"
