#!/usr/bin/env bash
# camera.rotation on real clips: each dev clip turned by ffmpeg as a sideways or upside-down camera
# would show it, replayed with the rotation that undoes the turn and without it, and snapshotted
# every 2 s of its labelled span without a rotation (does the hint name the right one?).
# Usage, from the package root after `swift build -c release` and making dev.toml (docs/accuracy.md):
#   Tests/PoseEstimationTests/Scripts/rotation_check.sh [clip.mp4:start:end …]
set -euo pipefail
posewatch=${POSEWATCH:-.build/release/posewatch}
config=${CONFIG:-dev.toml}
videos=${VIDEOS:-../shared/data/videos}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clips=("$@")
[ ${#clips[@]} -gt 0 ] || clips=(wahoo_squats.mp4:11:25 wahoo_jumping_jacks.mp4:11:22 wahoo_lunges.mp4:6:22
                                 stock_lunges1.mp4:1:15 social_burpees.mp4:1:5 pushup1.mp4:1:3 quva_other_floor_press.mp4:1:25)
# ffmpeg filter, and the camera.rotation that stands its picture up again.
turns=("null:0" "transpose=1:270" "transpose=2:90" "hflip,vflip:180")

summary() {  # the replay summary's rows as "label seconds/reps; …" and the frames line
    awk '/^[a-z_]+ +[0-9.]+ +([0-9]+|-)$/ { printf "%s %s/%s; ", $1, $2, $3 } /frames,/ { sub(/, [0-9]+ decisions/, ""); printf "| %s", $0 }'
}

printf '%-24s %-12s %-8s %s\n' clip turn rotation "replay summary | frames | snapshot hints (right/wrong/none)"
for entry in "${clips[@]}"; do
    IFS=: read -r clip start end <<< "$entry"
    for turn in "${turns[@]}"; do
        filter=${turn%:*} fix=${turn##*:}
        clipFile="$work/clip.y4m"
        ffmpeg -v error -y -i "$videos/$clip" -r 15 -vf "scale='min(640,iw)':-2,$filter" -pix_fmt yuv420p -f yuv4mpegpipe "$clipFile"
        right=0 wrong=0 none=0
        for at in $(seq "$start" 2 "$end"); do
            out=$("$posewatch" snapshot --input "$clipFile" --at "$at" --output "$work/x.png" --config "$config" --rotation 0)
            suggested=$(sed -n 's/.*set camera.rotation = \([0-9]*\) .*/\1/p' <<< "$out")
            if [ -z "$suggested" ]; then none=$((none + 1)); elif [ "$suggested" = "$fix" ]; then right=$((right + 1)); else wrong=$((wrong + 1)); fi
        done
        fixed=$("$posewatch" replay "$clipFile" --format text --config "$config" --rotation "$fix" | summary)
        printf '%-24s %-12s %-8s %s | hints %d/%d/%d\n' "${clip%.mp4}" "$filter" "$fix" "$fixed" "$right" "$wrong" "$none"
        if [ "$fix" != 0 ]; then
            raw=$("$posewatch" replay "$clipFile" --format text --config "$config" --rotation 0 | summary)
            printf '%-24s %-12s %-8s %s\n' "" "" "0" "$raw"
        fi
    done
done
