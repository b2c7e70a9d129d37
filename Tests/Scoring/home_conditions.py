#!/usr/bin/env python3
"""Home-conditions scoring: the development clips under conditions a home camera meets, replayed through
`posewatch replay`, in one table. Run it through home_conditions.sh (its header has the usage).

Each exerciser clip (labels.csv rows labelled with one of the five exercises whose file exists) is
converted once per condition with ffmpeg (cached by clip, condition and ffmpeg command) and replayed:

  as_filmed          Y4M at 15 fps, at most 640 px wide (score_replay.convert_clip, what score_replay scores)
  alone_half_left    the exerciser at half size in the left half of a canvas twice as wide, right half grey
  second_right       the same, with a second person (an other/ clip) in the right half
  alone_half_right   the exerciser at half size in the right half, left half grey
  second_left        the same, with the second person in the left half
  dim                eq=brightness=-0.25:contrast=0.5,noise=alls=20:allf=t
  rot90              transpose=1 (camera turned 90 degrees), no config
  rot90_fixed        the rot90 file replayed with a config saying [camera] rotation = 270
  half               the whole frame at half size
  shaky              a 90 % crop whose offset moves every frame, scaled back to the frame size
  fps10              10 fps instead of 15
  mjpeg_q25          raw MJPEG at -q:v 25 (replayed with --fps 15)

The exerciser's half is pixel-identical between alone_half_left and second_right (and between
alone_half_right and second_left), so the second-person rows measure the second person alone, not
the size change. The second person: the i-th exerciser clip of labels.csv gets other/ clip i mod 12
(labels.csv order), looped or cut to the exerciser's length, scaled to the same height and
centre-cropped or grey-padded to the exerciser's half width.

Scores per condition: span-majority label right (as score_replay.py), repetition count MAE and OBO on
rows with `reps` (whole clip), repetitions counted over all clips and labels, share of decided time with
no person, and non-zero exits (timeouts show as 124). The second-person rows add the count precision:
repetition events matched one-to-one (nearest in time, same label, within 1 s) to a repetition event of
the same clip's alone_half replay, over all repetitions counted. A replay that fails counts as a wrong
span and zero repetitions.
"""
import argparse
import collections
import concurrent.futures
import csv
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import score_replay  # noqa: E402  (the scoring and JSONL parsing are score_replay's)

EXERCISES = [label for label in score_replay.LABELS if label != "other"]
FPS = 15
MAX_WIDTH = 640
CONDITIONS = ["as_filmed", "alone_half_left", "second_right", "alone_half_right", "second_left", "dim",
              "rot90", "rot90_fixed", "half", "shaky", "fps10", "mjpeg_q25"]
ALONE_OF = {"second_right": "alone_half_left", "second_left": "alone_half_right"}
SAME_FILE = {"rot90_fixed": "rot90"}  # replayed from another condition's file
ROTATION_CONFIG = "[camera]\nrotation = 270\n"  # undoes transpose=1 (90 degrees clockwise)
GREY = "color=0x808080"
SCALE = f"scale='min({MAX_WIDTH},iw)':-2"
Y4M_OUT = ["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe"]
# name: (compared with, replays allowed to lose on span-majority, extra checks)
TARGETS = [("second_right", "alone_half_left", 1), ("second_left", "alone_half_right", 1),
           ("dim", "as_filmed", 2), ("rot90_fixed", "as_filmed", 1), ("half", "as_filmed", 1),
           ("shaky", "as_filmed", 1), ("fps10", "as_filmed", 1), ("mjpeg_q25", "as_filmed", 1)]
MAE_SLACK, REPS_RATIO, MATCH_SECONDS = 0.05, 1.15, 1.0


def clip_key(row):
    return os.path.splitext(row["file"])[0].replace("/", "_")


def y4m_size(path):
    with open(path, "rb") as handle:
        header = handle.readline().decode("ascii", "replace").split()
    size = {token[0]: int(token[1:]) for token in header[1:] if token[0] in "WH"}
    return size["W"], size["H"]


def ffmpeg_args(condition, source, base, distractor):
    """ffmpeg's arguments (without -y and the output path) and the output's extension. The two-half
    conditions start from the as_filmed file (base), so that they have its frames, one for one."""
    width, height = y4m_size(base)
    half_w, half_h = width // 4 * 2, height // 4 * 2
    if condition.startswith(("alone_half_", "second_")):
        exerciser = f"[0:v]scale={half_w}:{half_h},setsar=1[e]"
        if condition.startswith("alone_half_"):
            inputs = ["-i", base]
            other = f"color=c=0x808080:s={half_w}x{half_h}:r={FPS},setsar=1[d]"
        else:  # the second person, looped or cut to the exerciser's length
            inputs = ["-i", base, "-stream_loop", "-1", "-i", distractor]
            other = (f"[1:v]fps={FPS},scale=-2:{half_h},crop='min(iw,{half_w})':{half_h},"
                     f"pad={half_w}:{half_h}:(ow-iw)/2:0:{GREY},setsar=1[d]")
        pair = "[e][d]" if condition in ("alone_half_left", "second_right") else "[d][e]"  # exerciser left
        graph = f"{exerciser};{other};{pair}hstack=inputs=2:shortest=1,format=yuv420p[v]"
        return inputs + ["-filter_complex", graph, "-map", "[v]"] + Y4M_OUT, "y4m"
    rate, out, ext = FPS, Y4M_OUT, "y4m"
    chain = {
        "dim": f"{SCALE},eq=brightness=-0.25:contrast=0.5,noise=alls=20:allf=t",
        "rot90": f"{SCALE},transpose=1,{SCALE}",
        "half": f"scale={half_w}:{half_h}",
        "shaky": (f"scale={width}:{height},crop={width * 9 // 20 * 2}:{height * 9 // 20 * 2}"
                  f":'(iw-ow)/2*(1+sin(t*7))':'(ih-oh)/2*(1+sin(t*5.3))',scale={width}:{height}"),
        "fps10": SCALE,
        "mjpeg_q25": SCALE,
    }[condition]
    if condition == "fps10":
        rate = 10
    if condition == "mjpeg_q25":
        out, ext = ["-pix_fmt", "yuvj420p", "-q:v", "25", "-f", "mjpeg"], "mjpeg"
    return ["-i", source, "-r", str(rate), "-vf", chain] + out, ext


def build(task, cache):
    """Converts one (clip, condition) unless cached; returns the file's path."""
    row, condition, source, base, distractor = task
    args, ext = ffmpeg_args(condition, source, base, distractor)
    digest = hashlib.sha1(repr(args).encode()).hexdigest()[:8]
    target = os.path.join(cache, f"{clip_key(row)}__{condition}__{digest}.{ext}")
    if not os.path.exists(target):
        partial = target + ".part"
        try:
            subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y"] + args + [partial],
                           check=True, capture_output=True, timeout=900)
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
    return target


def as_filmed(row, source, cache):
    """score_replay's own conversion, into a scratch folder first so that a broken run leaves no file."""
    target = os.path.join(cache, f"{clip_key(row)}__as_filmed.y4m")
    if not os.path.exists(target):
        scratch = tempfile.mkdtemp(dir=cache)
        try:
            os.replace(score_replay.convert_clip(source, FPS, scratch, MAX_WIDTH), target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def replay(wrapper, path, extra):
    """(code, decisions, events, summary, message, seconds): code 0 or the exit status (124: timeout)."""
    started = time.monotonic()
    try:
        decisions, events, summary = score_replay.run_replay(wrapper, path, extra)
        return 0, decisions, events, summary, "", time.monotonic() - started
    except (RuntimeError, ValueError) as error:
        found = re.search(r"exited (-?\d+)", str(error))
        code = int(found.group(1)) if found else "output"
        message = str(error).split(": ", 1)[-1].strip().splitlines()[-1:] or [""]
        return code, [], [], None, message[0], time.monotonic() - started


def match_count(events, reference):
    """Repetition events matched one-to-one to reference events (same label, nearest, within 1 s)."""
    at = lambda event: event.get("at", event["t"])  # noqa: E731
    free = list(reference)
    matched = 0
    for event in sorted(events, key=at):
        near = [r for r in free if r["label"] == event["label"] and abs(at(r) - at(event)) <= MATCH_SECONDS]
        if near:
            free.remove(min(near, key=lambda r: abs(at(r) - at(event))))
            matched += 1
    return matched


def score_clip(row, result):
    code, decisions, events, summary, _, _ = result
    start = float(row["active_from_s"]) if row.get("active_from_s") else float("-inf")
    end = float(row["active_to_s"]) if row.get("active_to_s") else float("inf")
    majority = score_replay.majority([d["label"] for d in decisions if start <= d["t"] <= end]) if code == 0 else "-"
    reps = summary.get("reps", {}) if summary else {}
    seconds = summary.get("seconds", {}) if summary else {}
    return {"majority": majority, "right": majority == row["label"], "pred": int(reps.get(row["label"], 0)),
            "total": sum(int(v) for v in reps.values()), "no_person": float(seconds.get("no_person", 0)),
            "decided": sum(float(v) for v in seconds.values())}


def summarise(condition, rows, results, scores):
    keys = [clip_key(r) for r in rows]
    counted = [(scores[k]["pred"], int(r["reps"])) for k, r in zip(keys, rows) if r.get("reps") and int(r["reps"]) > 0]
    ok = [k for k in keys if results[k][0] == 0]
    figures = {
        "clips": len(keys), "right": sum(scores[k]["right"] for k in keys), "ok": len(ok), "counted": len(counted),
        "mae": sum(abs(p - g) / g for p, g in counted) / len(counted) if counted and ok else None,
        "obo": sum(abs(p - g) <= 1 for p, g in counted) / len(counted) if counted and ok else None,
        "reps": sum(scores[k]["total"] for k in keys),
        "no_person": (sum(scores[k]["no_person"] for k in ok) / max(1e-9, sum(scores[k]["decided"] for k in ok))
                      if ok else None),
        "exits": collections.Counter(results[k][0] for k in keys if results[k][0] != 0),
    }
    return figures


def precision(rows, results, alone_results):
    matched = counted = 0
    for key in (clip_key(r) for r in rows):
        if results[key][0] == 0 and alone_results[key][0] == 0:
            counted += len(results[key][2])
            matched += match_count(results[key][2], alone_results[key][2])
    return matched, counted


def fmt(value, pattern="{:.3f}"):
    return "-" if value is None else pattern.format(value)


def print_table(conditions, figures, precisions):
    head = (f"{'condition':17} {'clips':>5} {'spans':>7} {'MAE':>6} {'OBO':>6} {'reps':>13} {'no person':>9} "
            f"{'precision':>16}  exits")
    print(head)
    print("-" * len(head))
    for condition in conditions:
        f = figures[condition]
        reps = str(f["reps"])
        alone = ALONE_OF.get(condition)
        if alone in figures and figures[alone]["reps"]:
            reps += f" ({f['reps'] / figures[alone]['reps']:.2f}x)"
        prec = ""
        if condition in precisions:
            matched, counted = precisions[condition]
            prec = f"{matched / counted:.2f} ({matched}/{counted})" if counted else "- (0/0)"
        exits = ", ".join(f"{n} x {code}" for code, n in sorted(f["exits"].items(), key=str)) or "0"
        print(f"{condition:17} {f['clips']:>5} {str(f['right']) + '/' + str(f['clips']):>7} {fmt(f['mae']):>6} "
              f"{fmt(f['obo']):>6} {reps:>13} {fmt(f['no_person'] and 100 * f['no_person'], '{:.1f}%'):>9} "
              f"{prec:>16}  {exits}")


def print_targets(figures):
    print("\ntargets (not worse than the reference by more than the margin; a failed replay counts as wrong)")
    verdicts = []
    for condition, reference, margin in TARGETS:
        if condition not in figures or reference not in figures:
            continue
        f, r = figures[condition], figures[reference]
        checks = [(f"spans {f['right']} vs {r['right']} (within {margin})", f["right"] >= r["right"] - margin)]
        if condition in ALONE_OF:
            mae_ok = f["mae"] is not None and r["mae"] is not None and f["mae"] <= r["mae"] + MAE_SLACK
            checks.append((f"MAE {fmt(f['mae'])} vs {fmt(r['mae'])} (within {MAE_SLACK})", mae_ok))
            checks.append((f"reps {f['reps']} <= {REPS_RATIO} x {r['reps']} = {REPS_RATIO * r['reps']:.1f}",
                           f["reps"] <= REPS_RATIO * r["reps"]))
        if f["exits"]:
            checks.append((f"{sum(f['exits'].values())} failed replays", False))
        passed = all(ok for _, ok in checks)
        verdicts.append(passed)
        print(f"  {'PASS' if passed else 'FAIL'}  {condition:12} vs {reference:16} "
              + "; ".join(text + ("" if ok else " X") for text, ok in checks))
    return verdicts


def print_per_clip(conditions, rows, results, scores):
    print(f"\n{'clip':34} {'condition':17} {'truth':13} {'majority':14} {'reps':>4} {'gt':>3} {'all':>4} "
          f"{'noperson':>8} {'s':>5}  exit")
    for row in rows:
        key = clip_key(row)
        for condition in conditions:
            s, r = scores[condition][key], results[condition][key]
            share = f"{100 * s['no_person'] / s['decided']:.0f}%" if s["decided"] else "-"
            exit_text = "" if r[0] == 0 else f"{r[0]}: {r[4][:60]}"
            print(f"{row['file'][:34]:34} {condition:17} {row['label']:13} {s['majority']:14} {s['pred']:>4} "
                  f"{row.get('reps') or '':>3} {s['total']:>4} {share:>8} {r[5]:5.1f}  {exit_text}")


def run_all(jobs, function, tasks, what):
    """Runs function over tasks on `jobs` threads, with a progress line on stderr; returns the results in order."""
    results, done, started = [None] * len(tasks), 0, time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(function, task): index for index, task in enumerate(tasks)}
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
            done += 1
            if sys.stderr.isatty() or done == len(tasks):
                end = "\n" if done == len(tasks) else "\r"
                print(f"  {what}: {done}/{len(tasks)} in {time.monotonic() - started:.0f} s", end=end,
                      file=sys.stderr, flush=True)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", default=os.path.join(REPO, "..", "shared", "data", "videos", "labels.csv"))
    parser.add_argument("--only", help="keep the clips whose file contains this text")
    parser.add_argument("--conditions", help=f"comma-separated subset of: {','.join(CONDITIONS)}")
    parser.add_argument("--posewatch", default=os.path.join(REPO, ".build", "release", "posewatch"))
    parser.add_argument("--pose-model", default=os.path.join(REPO, "..", "shared", "models",
                                                             "movenet_singlepose_lightning_int8_4.tflite"),
                        help="passed to replay when the file exists (default: ../shared/models' MoveNet)")
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "posewatch-home-cache"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="seconds before a replay counts as hung")
    parser.add_argument("--per-clip", action="store_true", help="also print a row per clip and condition")
    parser.add_argument("replay_args", nargs="*", help="extra arguments for posewatch replay (after --)")
    args = parser.parse_args()

    if not os.path.exists(args.labels):
        print(f"home conditions: {args.labels} is absent (no ../shared data in this checkout): skipped")
        return 0
    for tool in ("ffmpeg", "timeout"):
        if shutil.which(tool) is None:
            print(f"home conditions: needs {tool} on PATH", file=sys.stderr)
            return 2
    if not os.access(args.posewatch, os.X_OK):
        print(f"home conditions: no posewatch binary at {args.posewatch} (swift build -c release, or --posewatch)",
              file=sys.stderr)
        return 2
    conditions = CONDITIONS
    if args.conditions:
        wanted = set(args.conditions.split(","))
        unknown = wanted - set(CONDITIONS)
        if unknown:
            parser.error(f"unknown condition(s) {', '.join(sorted(unknown))}; known: {', '.join(CONDITIONS)}")
        # as_filmed and the alone rows are the references the targets and the precision compare with
        wanted |= {"as_filmed"} | {ALONE_OF[c] for c in wanted if c in ALONE_OF}
        conditions = [c for c in CONDITIONS if c in wanted]

    folder = os.path.dirname(os.path.abspath(args.labels))
    with open(args.labels, newline="") as handle:
        table = list(csv.DictReader(handle))
    present = [r for r in table if os.path.exists(os.path.join(folder, r["file"]))]
    exercisers = [r for r in present if r["label"] in EXERCISES]
    others = [os.path.join(folder, r["file"]) for r in present if r["file"].startswith("other/")]
    if not others and any(c.startswith("second_") for c in conditions):
        print("home conditions: no other/ clips for the second person", file=sys.stderr)
        return 2
    distractor = {clip_key(r): others[i % len(others)] if others else None for i, r in enumerate(exercisers)}
    rows = [r for r in exercisers if not args.only or args.only in r["file"]]
    if not rows:
        print(f"home conditions: no exerciser clip matches {args.only!r}")
        return 1
    os.makedirs(args.cache, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="posewatch-home-")
    try:
        return evaluate(args, conditions, rows, folder, distractor, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def evaluate(args, conditions, rows, folder, distractor, scratch):
    started = time.monotonic()
    groups = collections.Counter(r["file"].split("/")[0] if "/" in r["file"] else "dev" for r in rows)
    # A copy of the binary, so that a rebuild during the run (swift build in the same checkout) cannot
    # mix two builds in one table; the wrapper makes a hang a failure (exit 124).
    posewatch = os.path.join(scratch, "posewatch-under-test")
    shutil.copy2(args.posewatch, posewatch)
    wrapper = os.path.join(scratch, "posewatch")
    with open(wrapper, "w") as handle:
        handle.write(f"#!/bin/sh\nexec timeout -k 5 {args.timeout} {shlex.quote(posewatch)} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    version = subprocess.run([posewatch, "--version"], capture_output=True, text=True).stdout.strip()
    if not version:
        print(f"home conditions: {args.posewatch} --version printed nothing (being rebuilt?)", file=sys.stderr)
        return 2
    built = os.stat(posewatch).st_mtime
    print(f"home conditions: {len(rows)} exerciser clips ({', '.join(f'{n} {g}' for g, n in groups.items())}) "
          f"x {len(conditions)} conditions, posewatch {version or '?'} ({args.posewatch}, built "
          f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(built))})", flush=True)

    # 1. conversions: as_filmed first (its frame size sets the others' geometry), then the rest
    sources = {clip_key(r): os.path.join(folder, r["file"]) for r in rows}

    def convert_base(row):
        try:
            return as_filmed(row, sources[clip_key(row)], args.cache)
        except subprocess.CalledProcessError as error:
            return error

    def convert(task):
        try:
            return build(task, args.cache)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            return error

    files = collections.defaultdict(dict)
    for row, path in zip(rows, run_all(args.jobs, convert_base, rows, "as_filmed conversions")):
        files["as_filmed"][clip_key(row)] = path
    tasks = []
    for condition in dict.fromkeys(SAME_FILE.get(c, c) for c in conditions if c != "as_filmed"):
        for row in rows:
            base = files["as_filmed"][clip_key(row)]
            if isinstance(base, Exception):
                files[condition][clip_key(row)] = base
                continue
            tasks.append((row, condition, sources[clip_key(row)], base, distractor[clip_key(row)]))
    for task, path in zip(tasks, run_all(args.jobs, convert, tasks, "condition conversions")):
        files[task[1]][clip_key(task[0])] = path
    for condition, original in SAME_FILE.items():
        files[condition] = files[original]
    converted = time.monotonic()

    # 2. replays
    config = os.path.join(scratch, "rotation.toml")
    with open(config, "w") as handle:
        handle.write(ROTATION_CONFIG)
    extra = list(args.replay_args)
    if os.path.exists(args.pose_model):
        extra += ["--pose-model", os.path.abspath(args.pose_model)]

    def replay_task(task):
        condition, row = task
        path = files[condition].get(clip_key(row))
        if path is None or isinstance(path, Exception):
            lines = (getattr(path, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()
            return "ffmpeg", [], [], None, (lines[0] if lines else str(path))[:200], 0.0
        options = list(extra)
        if path.endswith(".mjpeg"):
            options += ["--fps", str(FPS)]
        if condition == "rot90_fixed":
            options += ["--config", config]
        return replay(wrapper, path, options)

    replay_tasks = [(c, r) for c in conditions for r in rows]
    results = collections.defaultdict(dict)
    for (condition, row), result in zip(replay_tasks, run_all(args.jobs, replay_task, replay_tasks, "replays")):
        results[condition][clip_key(row)] = result
    replayed = time.monotonic()

    scores = {c: {clip_key(r): score_clip(r, results[c][clip_key(r)]) for r in rows} for c in conditions}
    figures = {c: summarise(c, rows, results[c], scores[c]) for c in conditions}
    precisions = {c: precision(rows, results[c], results[ALONE_OF[c]]) for c in conditions if c in ALONE_OF}
    if args.per_clip:
        print_per_clip(conditions, rows, results, scores)
        print()
    counted = figures[conditions[0]]["counted"]
    print(f"spans: span-majority label right; MAE/OBO: whole-clip count on the {counted} clips with counts; "
          f"reps: all repetitions counted (second rows: x alone at the same place); no person: share of decided "
          f"time; precision: second-person repetitions matching one of the alone replay's (same label, within "
          f"{MATCH_SECONDS:g} s)\n")
    print_table(conditions, figures, precisions)
    failures = [(c, r["file"], results[c][clip_key(r)]) for c in conditions for r in rows
                if results[c][clip_key(r)][0] != 0]
    if failures:
        print("\nfailed (ffmpeg: the conversion failed; 124: hung past --timeout), one example each:")
        kinds = collections.defaultdict(list)
        for condition, name, result in failures:
            kinds[(condition, str(result[0]))].append((name, result[4]))
        for (condition, code), clips in kinds.items():
            print(f"  {condition:17} {len(clips):>3} x {code}: {clips[0][0]}: {clips[0][1][:100]}")
    slowest = max((res[5], c, f) for c in conditions for f, res in ((r["file"], results[c][clip_key(r)]) for r in rows))
    print_targets(figures)
    if os.stat(args.posewatch).st_mtime != built:
        print(f"\nnote: {args.posewatch} was rebuilt during the run; this table is of the build it started with")
    print(f"\ntime: {replayed - started:.0f} s (conversions {converted - started:.0f} s, replays {replayed - converted:.0f} s "
          f"on {args.jobs} jobs); slowest replay {slowest[0]:.1f} s ({slowest[1]}, {slowest[2]}); cache {args.cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
