"""Repetition-count evaluation for issue 9: MAE (mean |pred − gt| / gt) and OBO (share |pred − gt| ≤ 1).

    # Countix-Fitness and Penn Action through the Python reference counter (counter.py):
    python training/counter/evaluate.py countix [--rows] [--config "hysteresis=0.3"] [--phase 1]
    python training/counter/evaluate.py penn
    # Short sets cut from repcount_half (the first 3-6 repetitions, the clip ending as the set does):
    python training/counter/evaluate.py short [--rows] [--tail 0.2]

    # The same through the Swift counter: the evaluation tests write per-sequence counts,
    #   POSEWATCH_COUNTS_DIR=/tmp/counts swift test --filter RepetitionCounterEvaluationTests
    # and this scores them (and compares them with the Python reference, sequence by sequence):
    python training/counter/evaluate.py swift /tmp/counts

    # Countix through `posewatch replay` (keypoint files): with --action, the counts must equal the
    # Python reference's; with the classifier's labels, the Python reference fed the same label
    # timeline (from the JSONL decisions) must give the same per-label counts (this checks the
    # holding of repetitions seen while no action is decided). Countix's poses are min–max
    # normalised per frame, so the classifier's labels themselves mean little there.
    python training/counter/evaluate.py replay --posewatch .build/release/posewatch

    # repcount_half (per-repetition bounds; README there), label fixed: in-span and whole-video
    # MAE/OBO, precision/recall/latency of the events, per class and on the tune / report halves
    # (split by subject); the same through `posewatch replay --action` with event-time parity:
    python training/counter/evaluate.py repcount [--rows] [--config "…"] [--phase 1]
    python training/counter/evaluate.py replay --set repcount --posewatch .build/release/posewatch

    # Real videos through the whole pipeline, once `posewatch replay` exists (issue 7): the command
    # template gets {input} (the clip, or a converted file from --convert) and {label}; the last
    # JSONL line's summary.reps[label] is the prediction; tolerance from labels.csv.
    python training/counter/evaluate.py videos \
        --command ".build/release/posewatch replay {input} --action {label} --format jsonl" \
        [--convert "ffmpeg -loglevel error -y -i {clip} -vf fps=15 -pix_fmt yuv420p {output}"]

    # Generated sessions (sessions.py: sets of the five exercises with rests, other movement,
    # walking, people entering and leaving; exact per-repetition times) through `posewatch replay`
    # with the classifier's labels, and with --action per set; per set and per repetition
    # (scoring.py). Needs no ../shared; generates the held-out seeds into --dir when it has none.
    python training/counter/evaluate.py sessions --posewatch .build/release/posewatch \
        [--dir /tmp/posewatch-sessions] [--split heldout|tune --generate] [--rows]

Nothing here reads outside ../shared/data or writes into the repository (sessions: into --dir).
"""
from __future__ import annotations

import argparse
import ast
import collections
import csv
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

import data
import scoring


def report(name, preds, gts):
    mae, obo = data.mae_obo(preds, gts)
    print(f"{name}: {len(gts)} sequences  MAE {mae:.3f}  OBO {obo:.3f}")
    return mae, obo


def countix_rows(predict):
    seqs = data.load_countix()
    rows = [(s.name, s.dataset_label, s.count, predict(s)) for s in seqs]
    return rows


def config_from(text):
    """`--config "hysteresis=0.3, window_s=4.0"` → counter.Config overrides (a variant run).
    Values are Python literals (numbers, strings, tuples, None, booleans); nothing is evaluated."""
    import counter
    if not text:
        return counter.Config()
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        if call.args:
            raise ValueError("every override needs a name")
        overrides = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        return counter.Config(**overrides)
    except (SyntaxError, ValueError, TypeError) as error:
        print(f"--config {text!r}: {error}", file=sys.stderr)
        sys.exit(2)


def config_for(config, sequence):
    """`config` for one dataset sequence: a class posewatch does not name is counted by the rule
    alone (data.GENERIC_LABEL), as `replay_args` has posewatch count it."""
    return dataclasses.replace(config, phase_labels=()) if sequence.by_rule else config


def replay_args(sequence):
    """`posewatch replay` arguments for one dataset sequence, label fixed (config_for's counting)."""
    return ["--action", sequence.label] + (["--motion-rule"] if sequence.by_rule else [])


def score_countix(rows, show_rows=False, durations=None):
    report("countix_fitness (all usable)", [r[3] for r in rows], [r[2] for r in rows])
    # Split-half: sequences in index order, odd and even positions (a variant tuned on one half
    # is reported on the other).
    for parity, name in ((1, "odd"), (0, "even")):
        half = [r for i, r in enumerate(rows) if i % 2 == parity]
        report(f"  {name}-indexed half", [r[3] for r in half], [r[2] for r in half])
    if durations is not None:
        dense = [r for r in rows if durations[r[0]] / r[2] <= data.SPARSE_PERIOD_S]
        sparse = [r for r in rows if durations[r[0]] / r[2] > data.SPARSE_PERIOD_S]
        report(f"  duration/count <= {data.SPARSE_PERIOD_S:.0f} s (the set fills the video)",
               [r[3] for r in dense], [r[2] for r in dense])
        report(f"  duration/count >  {data.SPARSE_PERIOD_S:.0f} s (mostly other movement)",
               [r[3] for r in sparse], [r[2] for r in sparse])
    ours = [r for r in rows if r[1] in data.COUNTIX_ACTION]
    report("countix_fitness squat/lunge/push_up", [r[3] for r in ours], [r[2] for r in ours])
    by = collections.defaultdict(list)
    for r in rows:
        by[r[1]].append(r)
    for label in sorted(by):
        rs = by[label]
        mae, obo = data.mae_obo([r[3] for r in rs], [r[2] for r in rs])
        signed = np.mean([(r[3] - r[2]) / r[2] for r in rs])
        print(f"  {label:14s} n={len(rs):3d}  MAE {mae:.3f}  OBO {obo:.3f}  mean signed error {signed:+.3f}")
    if show_rows:
        for r in rows:
            print(f"  {r[0]:28s} {r[1]:14s} gt {r[2]:3d} pred {r[3]:3d}")


def penn_summary(rows):
    """Penn Action has no repetition labels: its clips are mostly one cycle, some two or three. We
    report what the counter says per class (share of clips with 0, 1, 2, ≥3 counted), a sanity
    check rather than an accuracy."""
    by = collections.defaultdict(list)
    for name, label, count in rows:
        by[label].append(count)
    print("penn_action_coco17 (no count labels; clips mostly one cycle): counted per clip")
    print(f"  {'class':14s} {'clips':>5s} {'mean':>5s}  share 0 / 1 / 2 / ≥3")
    for label in sorted(by):
        c = np.array(by[label])
        shares = [np.mean(c == 0), np.mean(c == 1), np.mean(c == 2), np.mean(c >= 3)]
        print(f"  {label:14s} {len(c):5d} {c.mean():5.2f}  " + " / ".join(f"{x:.2f}" for x in shares))


def cmd_countix(args):
    import counter
    config = config_from(args.config)
    seqs = data.load_countix(phase=args.phase)
    rows = [(s.name, s.dataset_label, s.count, counter.count_sequence(s.poses, s.label, config=config_for(config, s)).session) for s in seqs]
    score_countix(rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})


def python_events(counter_run) -> list[scoring.Event]:
    """The reference counter's events as scoring.Events, one per repetition: `at` the frame the
    repetition was seen on, `credited` the frame it was counted on."""
    events = []
    last = collections.Counter()
    for (now, label, count), at in zip(counter_run.events, counter_run.event_at):
        events += [scoring.Event(at=at, credited=now)] * (count - last[label])
        last[label] = count
    return events


def jsonl_events(lines, label) -> list[scoring.Event]:
    """`posewatch replay --format jsonl`'s `rep` events of `label`, one per repetition (an event
    whose count rose by n stands for n): `at` when the repetition happened (the "at" field when
    replay gives it: a number, or one per repetition; else the frame's time `t`), `credited` the
    frame's time."""
    events, last = [], 0
    for r in lines:
        if r.get("event") == "rep" and r.get("label") == label:
            count, credited = int(r["count"]), float(r["t"])
            at = r.get("at", credited)
            ats = [float(a) for a in at] if isinstance(at, list) else [float(at)] * (count - last)
            events += [scoring.Event(at=a, credited=credited) for a in ats]
            last = count
    return events


def score_repcount(results, show_rows=False, title="repcount_half, label fixed"):
    """results: [(RepCountSequence, [scoring.Event])]. In-span and whole-video MAE/OBO and the
    per-repetition figures (events inside the annotated set matched to repetitions) for all
    sequences, each half and each class."""
    used = [(q, e) for q, e in results if not q.excluded]
    for q, _ in results:
        if q.excluded:
            print(f"  excluded {q.name} ({q.dataset_label}): {q.excluded}")
    print(f"{title}: {len(used)} sequences")
    print(f"  {'group':28s} {'n':>3s}  in-span MAE   OBO   whole MAE   OBO   per repetition, in span")

    def line(name, group):
        if not group:
            return
        counts = [q.count for q, _ in group]
        spans = [len(scoring.in_span(e, q.repetitions)) for q, e in group]
        wholes = [len(e) for _, e in group]
        totals = scoring.Totals()
        for q, e in group:
            totals.add(scoring.match(scoring.in_span(e, q.repetitions), q.repetitions))
        span_mae, span_obo = scoring.mae_obo(spans, counts)
        whole_mae, whole_obo = scoring.mae_obo(wholes, counts)
        print(f"  {name:28s} {len(group):3d}  {span_mae:11.3f} {span_obo:5.3f}  {whole_mae:10.3f} {whole_obo:5.3f}   "
              + totals.line())

    line("all", used)
    for half in ("tune", "report"):
        line(f"{half} half", [(q, e) for q, e in used if q.half == half])
    # the classes posewatch names (squats, jumping jacks, push-ups); the rest count under a stand-in label
    for half in ("tune", "report"):
        line(f"{half} half, our exercises", [(q, e) for q, e in used if q.half == half and q.action])
    by = collections.defaultdict(list)
    for q, e in used:
        by[q.dataset_label].append((q, e))
    for label in sorted(by):
        line(f"{label} ({by[label][0][0].label})", by[label])
    if show_rows:
        for q, e in used:
            span = len(scoring.in_span(e, q.repetitions))
            m = scoring.match(scoring.in_span(e, q.repetitions), q.repetitions)
            print(f"  {q.name:12s} {q.dataset_label:14s} {q.half:6s} gt {q.count:3d}  in span {span:3d}  whole {len(e):3d}"
                  f"  matched {m.matched:3d}")


def cmd_repcount(args):
    import counter
    config = config_from(args.config)
    seqs = data.load_repcount(phase=args.phase)
    results = [(q, python_events(counter.count_sequence(q.poses, q.label, config=config_for(config, q)))) for q in seqs]
    score_repcount(results, args.rows, "repcount_half, label fixed, Python reference counter")


def cmd_short(args):
    """Short sets cut from real footage: the first N repetitions of each repcount_half sequence of
    posewatch's exercises, from 1 s before the first (or the sequence's start) to `--tail` seconds
    after the N-th ends (the clip ends as the set does), label fixed, Python reference counter. A
    cut is exact when the events inside its span (tolerance 1 s) number N; missed repetitions are
    told by place (first, middle, last)."""
    import counter
    config = config_from(args.config)
    seqs = [q for q in data.load_repcount(phase=args.phase) if not q.excluded and q.action]
    print(f"short sets cut from repcount_half (posewatch's exercises), label fixed, Python reference counter; "
          f"each cut from 1 s before its first repetition to {args.tail:g} s after its last")
    for n in (3, 4, 5, 6):
        for half in ("tune", "report"):
            exact = total = 0
            missed, extra = collections.Counter(), 0
            for q in seqs:
                reps = sorted(q.repetitions, key=lambda r: r[0])
                if q.half != half or len(reps) < n:
                    continue
                start = max(0.0, reps[0][0] - 1.0)
                a = int(round(start * q.fps))
                b = min(len(q.poses), int(round((reps[n - 1][1] + args.tail) * q.fps)))
                cut = [(lo - a / q.fps, hi - a / q.fps) for lo, hi in reps[:n]]
                events = scoring.in_span(python_events(counter.count_sequence(q.poses[a:b], q.label, config=config_for(config, q))), cut)
                hit = {rep for _, rep in matched_pairs(events, cut, scoring.TOLERANCE_S)}
                for i, rep in enumerate(cut):
                    if rep not in hit:
                        missed["first" if i == 0 else "last" if i == n - 1 else "middle"] += 1
                extra += max(0, len(events) - len(hit))
                total += 1
                exact += len(events) == n
                if args.rows and len(events) != n:
                    print(f"    {q.name:12s} {q.dataset_label:14s} {n} repetitions: {len(events)} counted")
            if total:
                print(f"  {n} repetitions, {half:6s} half: {exact}/{total} exact; missed: "
                      + (", ".join(f"{k} {missed[k]}" for k in ("first", "middle", "last") if missed[k]) or "none")
                      + f"; unmatched events {extra}")


def cmd_penn(args):
    import counter
    config = config_from(args.config)
    rows = [(s.name, s.dataset_label, counter.count_sequence(s.poses, s.label, config=config_for(config, s)).session)
            for s in data.load_penn()]
    penn_summary(rows)


def cmd_swift(args):
    import counter
    path = os.path.join(args.directory, "countix.tsv")
    if os.path.exists(path):
        with open(path) as f:
            swift = {r["name"]: int(r["predicted"]) for r in csv.DictReader(f, delimiter="\t")}
        seqs = data.load_countix()
        rows = [(s.name, s.dataset_label, s.count, swift[s.name]) for s in seqs]
        print("Swift RepetitionCounter:")
        score_countix(rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})
        python = {s.name: counter.count_sequence(s.poses, s.label, config=config_for(counter.Config(), s)).session for s in seqs}
        same = sum(python[n] == swift[n] for n in swift)
        print(f"Swift vs Python reference: identical counts on {same}/{len(swift)} sequences")
    path = os.path.join(args.directory, "penn.tsv")
    if os.path.exists(path):
        with open(path) as f:
            penn_summary([(r["name"], r["label"], int(r["predicted"])) for r in csv.DictReader(f, delimiter="\t")])


def replay_jsonl(posewatch, path, extra):
    command = [posewatch, "replay", path, "--fps", "15", "--format", "jsonl", "--config", "/dev/null"] + extra
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "no message"
        print(f"{shlex.join(command)}: exit {result.returncode}: {message}", file=sys.stderr)
        sys.exit(1)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def phase_outputs(poses):
    """The phase net's outputs (learned/phase_net.py: the models posewatch embeds) for a pose array."""
    from learned import phase_net
    return phase_net.outputs(poses)


def save_pixels(sequence, directory):
    """Writes a sequence's poses as a keypoint file replay reads: the normalised body box placed in
    a 480 × 480 frame (the counter's features are box-relative, so the scale does not matter),
    score 0.9 where detected, an all-zero row where not."""
    poses = sequence.poses.copy()
    poses[:, :, :2] = 80 + poses[:, :, :2] * 320
    poses[:, :, 2] = np.where(sequence.poses[:, :, 2] > 0, 0.9, 0)
    poses[sequence.poses[:, :, 2].max(axis=1) == 0] = 0
    path = os.path.join(directory, sequence.name if sequence.name.endswith(".npy") else sequence.name + ".npy")
    np.save(path, poses.astype(np.float32))
    return path


def cmd_replay(args):
    if args.set == "repcount":
        return replay_repcount(args)
    import counter
    seqs = data.load_countix()
    fixed_rows, same_fixed, same_classified, held = [], 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for s in seqs:
            path = save_pixels(s, tmp)
            action = s.label
            fixed = int(replay_jsonl(args.posewatch, path, replay_args(s))[-1]["summary"]["reps"][action])
            fixed_rows.append((s.name, s.dataset_label, s.count, fixed))
            # the phase net reads the poses replay reads (pixels): its int8 input is then the same
            pixels = np.load(path)
            same_fixed += fixed == counter.count_sequence(s.poses, action=action, config=config_for(counter.Config(), s),
                                                          phase_outputs=phase_outputs(pixels)).session
            lines = replay_jsonl(args.posewatch, path, [])
            decisions = [(r["t"], r["label"]) for r in lines if "label" in r and "event" not in r]
            reference = counter.RepetitionCounter(counter.Config())
            without_credit = counter.RepetitionCounter(counter.Config(credit_unnamed=False))
            for c in (reference, without_credit):
                c.use_phase_net(None, phase_outputs(pixels))
            k = -1
            for i, pose in enumerate(s.poses):
                t = i / s.fps
                while k + 1 < len(decisions) and decisions[k + 1][0] <= t + 2e-3:  # JSONL times have 3 decimals
                    k += 1
                label = decisions[k][1] if k >= 0 else "starting_up"
                label = label if label in counter.COUNTABLE or label == "other" else None
                for c in (reference, without_credit):
                    c.process(t, pose if pose[:, 2].max() > 0 else None, label)
            swift = lines[-1]["summary"]["reps"]
            same_classified += all(reference.counts[a] == int(swift.get(a, 0)) for a in counter.COUNTABLE)
            held += reference.session != without_credit.session
    print("Swift RepetitionCounter through posewatch replay --action:")
    score_countix(fixed_rows, args.rows, {s.name: len(s.poses) / s.fps for s in seqs})
    print(f"replay --action vs Python reference: identical counts on {same_fixed}/{len(seqs)} sequences")
    print(f"replay with the classifier's labels vs Python reference on the same labels: identical per-label counts on "
          f"{same_classified}/{len(seqs)} sequences (repetitions credited when the exercise was named changed the count on {held})")


def replay_repcount(args):
    """repcount_half through `posewatch replay --action LABEL`: scored as `evaluate.py repcount`,
    and compared with the Python reference event by event (same count, same times to JSONL's
    millisecond)."""
    import counter
    config = config_from(args.config)
    seqs = data.load_repcount()
    results, same_counts, same_times = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for q in seqs:
            path = save_pixels(q, tmp)
            lines = replay_jsonl(args.posewatch, path, replay_args(q))
            swift = jsonl_events(lines, q.label)
            results.append((q, swift))
            python = python_events(counter.count_sequence(q.poses, q.label, config=config_for(config, q),
                                                          phase_outputs=phase_outputs(np.load(path))))
            same_counts += len(swift) == len(python)
            # `at` is compared only where replay gives it (else it is `t`, the credited time).
            has_at = any("at" in r for r in lines if r.get("event") == "rep")
            same_times += len(swift) == len(python) and all(
                abs(a.credited - b.credited) < 2e-3 and (not has_at or abs(a.at - b.at) < 2e-3)
                for a, b in zip(swift, python))
            if args.rows and len(swift) != len(python):
                print(f"  {q.name}: replay {len(swift)} events, Python {len(python)}")
    score_repcount(results, args.rows, "repcount_half through posewatch replay --action")
    print(f"replay --action vs Python reference: identical counts on {same_counts}/{len(seqs)} sequences, "
          f"identical event times on {same_times}/{len(seqs)} (credited; when it happened too where replay gives \"at\")")


def cmd_videos(args):
    """Two figures per clip. "clip": the final count over the whole clip (the summary). "span": the
    repetition events of the clip's label whose time lies inside the labelled active span
    (labels.csv `active_from_s`–`active_to_s`), which is where the labelled repetitions are:
    outside it are title cards, standing and talking, whose right label is `other` or
    `no_person` (data README), so with `--action` fixing the label for the whole clip anything
    counted there is not one of the labelled repetitions. An event comes at most 1 s after its
    repetition ended and usually before (at the turning half), so a repetition inside the span
    has its event inside it; not one second of slack is given beyond the span."""
    videos = os.path.join(data.SHARED_DATA, "videos")
    with open(os.path.join(videos, "labels.csv")) as f:
        clips = [r for r in csv.DictReader(f) if r["reps"]]
    preds, span_preds, gts, within, span_within = [], [], [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for clip in clips:
            source = os.path.join(videos, clip["file"])
            inp = source
            if args.convert:
                inp = os.path.join(tmp, os.path.splitext(os.path.basename(clip["file"]))[0] + args.converted_ext)
                convert = args.convert.replace("{clip}", shlex.quote(source)).replace("{output}", shlex.quote(inp))
                subprocess.run(convert, shell=True, check=True)
            cmd = args.command.replace("{input}", shlex.quote(inp)).replace("{label}", clip["label"])
            result = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if result.returncode != 0:
                print(f"  {clip['file']}: replay failed ({result.returncode}): {result.stderr.strip()[:200]}")
                continue
            lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
            summary = lines[-1]["summary"]
            pred = int(summary.get("reps", {}).get(clip["label"], 0))
            start = float(clip["active_from_s"]) if clip["active_from_s"] else -np.inf
            end = float(clip["active_to_s"]) if clip["active_to_s"] else np.inf
            # An event can stand for more than one repetition (the warm-up credit, held ones):
            # its count goes up by more than one.
            span_pred, last = 0, 0
            for r in lines:
                if r.get("event") == "rep" and r.get("label") == clip["label"]:
                    if start <= r["t"] <= end:
                        span_pred += int(r["count"]) - last
                    last = int(r["count"])
            gt = int(clip["reps"])
            tol = int(clip["reps_tolerance"] or 0)
            if clip["label"] == "other":
                # A repetitive move that is none of ours: its reference count is what a generic counter
                # would say, but ours never counts `other`, so 0 is right. Not in MAE/OBO.
                ok = span_ok = pred == 0
            else:
                ok = abs(pred - gt) <= tol
                span_ok = abs(span_pred - gt) <= tol
                within += ok
                span_within += span_ok
                preds.append(pred)
                span_preds.append(span_pred)
                gts.append(gt)
            print(f"  {clip['file']:34s} {clip['label']:14s} gt {gt:3d} ±{tol}  clip {pred:3d} {'ok  ' if ok else 'MISS'}"
                  f"  span {start:5.1f}-{end:5.1f} s {span_pred:3d} {'ok' if span_ok else 'MISS'}")
    if gts:
        report("videos with counts, whole clip", preds, gts)
        print(f"  within tolerance: {within}/{len(gts)} = {within / len(gts):.2f}")
        report("videos with counts, events inside the labelled span", span_preds, gts)
        print(f"  within tolerance: {span_within}/{len(gts)} = {span_within / len(gts):.2f}")


SESSION_BUCKETS = ("label", "tempo", "view", "distance", "scores", "length", "usable", "label and usable")
NOT_DECIDED = ("starting_up", "no_person", "low_confidence")


def rep_events(lines):
    """The JSONL `rep` events as (label, scoring.Event), one per repetition: an event whose count
    rises by more than one stands for that many (repetitions credited together). `at` (when the
    repetition happened; a number, or one per repetition) is used when present, else `t`."""
    import scoring
    out, last = [], collections.Counter()
    for r in lines:
        if r.get("event") != "rep":
            continue
        label, credited = r["label"], float(r["t"])
        n = max(1, int(r["count"]) - last[label])
        last[label] = int(r["count"])
        at = r.get("at", credited)
        ats = [float(a) for a in at] if isinstance(at, list) else [float(at)] * n
        out.extend((label, scoring.Event(at=a, credited=credited)) for a in ats)
    return out


def decision_runs(lines):
    """[(t, label)] where the reported label changes (the JSONL decisions)."""
    runs = []
    for r in lines:
        if "label" in r and "event" not in r and (not runs or runs[-1][1] != r["label"]):
            runs.append((float(r["t"]), r["label"]))
    return runs


def settled_at(runs, label, credited):
    """When the decision reported at `credited` (JSONL times have 3 decimals) began, if it is `label`."""
    current = None
    for t, name in runs:
        if t > credited + 2e-3:
            break
        current = (t, name)
    return current[0] if current and current[1] == label else None


def matched_pairs(events, repetitions, tolerance):
    """scoring.match's pairing, as (event, repetition) pairs (it reports only the figures)."""
    order = sorted(events, key=lambda e: e.at)
    ends = sorted(repetitions, key=lambda r: r[1])
    pairs, j = [], 0
    for event in order:
        while j < len(ends) and ends[j][1] < event.at - tolerance:
            j += 1
        if j < len(ends) and ends[j][1] <= event.at + tolerance:
            pairs.append((event, ends[j]))
            j += 1
    return pairs


def score_set(s, labelled, runs, tolerance):
    """One set against the events: those of its label inside its span (first start − tolerance to
    last end + tolerance) are its count."""
    import scoring
    reps = [tuple(r) for r in s["reps"]]
    lo, hi = reps[0][0] - tolerance, reps[-1][1] + tolerance
    mine = [e for label, e in labelled if label == s["label"] and lo <= e.at <= hi]
    wrong = sum(1 for label, e in labelled if label != s["label"] and lo <= e.at <= hi)
    m = scoring.match(mine, reps, tolerance)
    pairs = matched_pairs(mine, reps, tolerance)
    assert len(pairs) == m.matched
    on_time = late_settled = 0
    for event, rep in pairs:
        if event.credited - rep[1] <= tolerance:
            on_time += 1
        else:
            settle = settled_at(runs, s["label"], event.credited)
            if settle is not None and event.credited - settle <= tolerance:
                on_time += 1
                late_settled += 1
    # Why repetitions and events go unmatched: where in the set the missed repetitions are, and
    # which unmatched events sit at a repetition's far pose more than `tolerance` before its end
    # (a count at the turning point of a slow repetition).
    hit = {rep for _, rep in pairs}
    missed = collections.Counter(
        "first" if i == 0 else "2nd-3rd" if i <= 2 else "last" if i == len(reps) - 1 else "middle"
        for i, rep in enumerate(sorted(reps, key=lambda r: r[1])) if rep not in hit)
    paired = {id(e) for e, _ in pairs}
    far = s.get("far", [])
    early = sum(1 for e in mine if id(e) not in paired and any(
        abs(e.at - f) <= 0.5 and e.at < end - tolerance for (_, end), f in zip(reps, far)))
    return dict(count=len(mine), wrong=wrong, match=m, on_time=on_time, late_settled=late_settled,
                unmatched=len(mine) - m.matched, early=early, missed=missed)


def label_seconds(runs, lo, hi):
    """Seconds of each reported label between lo and hi."""
    seconds = collections.Counter()
    for (t, label), nxt in zip(runs, runs[1:] + [(np.inf, None)]):
        a, b = max(t, lo), min(nxt[0], hi)
        if b > a:
            seconds[label] += b - a
    return seconds


def set_label_figures(s, runs):
    """The classifier's decisions over the set's repetitions: (majority label, share of time on the
    set's label, the same from 2 s (one window) into the set, seconds from the first repetition's
    start to the label's first report)."""
    lo, hi = s["reps"][0][0], s["reps"][-1][1]
    seconds = label_seconds(runs, lo, hi)
    total = sum(seconds.values())
    majority = seconds.most_common(1)[0][0] if seconds else "none"
    settled = label_seconds(runs, lo + 2.0, hi)
    settled_share = settled[s["label"]] / sum(settled.values()) if sum(settled.values()) else 0.0
    first = None
    for (t, label), nxt in zip(runs, runs[1:] + [(np.inf, None)]):
        if label == s["label"] and nxt[0] > lo and t <= hi:  # the label is reported at some time in the set
            first = max(t, lo)
            break
    return majority, (seconds[s["label"]] / total if total else 0.0), settled_share, (None if first is None else first - lo)


class SessionTally:
    """Sums of the per-set figures for one group of sets."""

    def __init__(self):
        import scoring
        self.sets = self.exact = self.named = self.wrong = self.unmatched = 0
        self.events = self.on_time = self.late_settled = 0
        self.totals = scoring.Totals()
        self.off = []  # count − truth per set
        self.truth = []
        self.early = 0
        self.missed = collections.Counter()

    def add(self, result, named):
        m = result["match"]
        self.sets += 1
        self.exact += result["count"] == m.repetitions
        self.named += named
        self.wrong += result["wrong"]
        self.totals.add(m)
        self.on_time += result["on_time"]
        self.late_settled += result["late_settled"]
        self.unmatched += result["unmatched"]
        self.off.append(result["count"] - m.repetitions)
        self.truth.append(m.repetitions)
        self.early += result["early"]
        self.missed.update(result["missed"])

    def line(self, name, width=18):
        t = self.totals
        under = sum(1 for d in self.off if d < 0)
        over = sum(1 for d in self.off if d > 0)
        return (f"  {name:{width}s} sets {self.sets:3d}  exact {self.exact / self.sets:6.1%} (under {under}, over {over})"
                f"  reps matched {t.recall:6.1%} of {t.repetitions:4d}  precision {t.precision:6.1%}"
                f"  on time {self.on_time / t.matched if t.matched else float('nan'):6.1%}"
                f"  named {self.named / self.sets:6.1%}")


def usable_share(s, poses, fps):
    """The share of the set's frames (its first repetition's start to its last one's end) with a pose
    the counter can use (`counter.usable`, default settings)."""
    import counter
    a = max(0, int(np.floor(s["reps"][0][0] * fps)))
    b = max(a + 1, min(len(poses), int(np.ceil(s["reps"][-1][1] * fps))))
    return float(np.mean(counter.usable(poses[a:b], counter.Config())))


def session_buckets(s, usable):
    n = s["count"]
    share = "usable <80%" if usable < 0.8 else "usable 80-95%" if usable < 0.95 else "usable >=95%"
    return {"label": s["label"], "tempo": s["tempo"], "view": s["view"], "distance": s["distance"],
            "scores": s["scores"], "length": "3-6 reps (short)" if n <= 6 else "7-12 reps" if n <= 12 else "13-20 reps",
            "usable": share, "label and usable": f"{s['label']}, {share}"}


def outside_events(ann, labelled, tolerance):
    """Events outside every set's span, by what the person was doing at `at`."""
    spans = [(s["reps"][0][0] - tolerance, s["reps"][-1][1] + tolerance) for s in ann["sets"]]
    where = collections.Counter()
    for label, e in labelled:
        if any(lo <= e.at <= hi for lo, hi in spans):
            continue
        seg = next((g for g in ann["segments"] if g["start"] <= e.at < g["end"]), ann["segments"][-1])
        kind = "set rest pose" if seg["kind"] == "set" else seg["kind"]
        where[f"{kind} ({label})"] += 1
    return where


def cmd_sessions(args):
    """Generated sessions (sessions.py) through `posewatch replay`: the classifier's labels as the
    appliance runs, and the label fixed per set (--action, on the set cut out with its rests)."""
    import scoring
    import sessions as gen
    tol = args.tolerance
    if not (os.path.isfile(args.posewatch) and os.access(args.posewatch, os.X_OK)):
        print(f"{args.posewatch}: no posewatch executable there (swift build -c release --product posewatch; or --posewatch PATH)",
              file=sys.stderr)
        sys.exit(2)
    if args.count < 1:
        print("--count must be at least 1", file=sys.stderr)
        sys.exit(2)
    index_path = os.path.join(args.dir, "index.json")
    seeds = gen.seeds_for(args.split, args.count, args.first_seed)
    if args.generate or not os.path.exists(index_path):
        gen.generate(args.dir, seeds, noise=args.noise)
    with open(index_path) as f:
        index = json.load(f)
    held_noise = index.get("noise", "harsh")  # folders written before the calibrated model have none
    if index["seeds"] != seeds or (held_noise != args.noise and not index.get("clean_poses")):
        print(f"{args.dir} holds seeds {index['seeds'][0]}-{index['seeds'][-1]} with the {held_noise} detector model, not "
              f"{seeds[0]}-{seeds[-1]} with {args.noise} (--split/--count/--first-seed/--noise): add --generate to replace "
              f"them, or use another --dir", file=sys.stderr)
        sys.exit(2)
    extra = shlex.split(args.replay_args)
    modes = [("classifier", "classifier's labels (posewatch replay FILE, no --action: as the appliance runs)")]
    if not args.no_action:
        modes.append(("action", "label fixed per set (posewatch replay CUT --action LABEL; the set with up to 3 s either side)"))
    tallies = {m: collections.defaultdict(SessionTally) for m, _ in modes}
    outside = {m: collections.Counter() for m, _ in modes}
    settle_delays, rows, shares, settled_shares = [], [], [], []
    between = collections.Counter()  # decision seconds outside the sets, by reported label
    minutes = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for entry in index["sessions"]:
            name = entry["name"]
            with open(os.path.join(args.dir, name + ".json")) as f:
                ann = json.load(f)
            path = os.path.join(args.dir, name + ".npy")
            minutes += ann["seconds"] / 60
            lines = replay_jsonl(args.posewatch, path, extra)
            labelled, runs = rep_events(lines), decision_runs(lines)
            outside["classifier"].update(outside_events(ann, labelled, tol))
            spans = [(x["reps"][0][0], x["reps"][-1][1]) for x in ann["sets"]]
            for (t, label), nxt in zip(runs, runs[1:] + [(ann["seconds"], None)]):
                # decision time outside the sets' repetitions (the label's seconds minus its overlap with the sets)
                inside = sum(max(0.0, min(nxt[0], hi) - max(t, lo)) for lo, hi in spans)
                between[label] += max(0.0, nxt[0] - t - inside)
            poses = np.load(path)
            sets = ann["sets"]
            for i, s in enumerate(sets):
                usable = usable_share(s, poses, ann["fps"])
                result = score_set(s, labelled, runs, tol)
                majority, share, settled_share, delay = set_label_figures(s, runs)
                shares.append(share)
                settled_shares.append(settled_share)
                if delay is not None:
                    settle_delays.append(delay)
                for key in ("all",) + tuple(f"{b}: {v}" for b, v in session_buckets(s, usable).items()):
                    tallies["classifier"][key].add(result, majority == s["label"])
                line = (f"{name} set {i} {s['label']:13s} {s['count']:2d} reps {s['rep_seconds']:.2f} s {s['view']:7s} "
                        f"{s['distance_m']:4.1f} m score {s['score']:.2f}  classifier: {result['count']:2d} counted, {result['match'].matched:2d} matched, "
                        f"{result['on_time']:2d} on time, named {majority} ({share:.0%})")
                if "action" in tallies:
                    # the set cut out with its rests: halfway to the neighbouring sets at most
                    lo = s["reps"][0][0] - 3.0
                    hi = s["reps"][-1][1] + 3.0
                    if i > 0:
                        lo = max(lo, (sets[i - 1]["reps"][-1][1] + s["reps"][0][0]) / 2)
                    if i + 1 < len(sets):
                        hi = min(hi, (s["reps"][-1][1] + sets[i + 1]["reps"][0][0]) / 2)
                    a, b = max(0, int(np.floor(lo * ann["fps"]))), min(len(poses), int(np.ceil(hi * ann["fps"])))
                    cut = os.path.join(tmp, f"{name}_{i}.npy")
                    np.save(cut, poses[a:b])
                    cut_lines = replay_jsonl(args.posewatch, cut, extra + ["--action", s["label"]])
                    shift = a / ann["fps"]
                    for r in cut_lines:
                        if "t" in r:
                            r["t"] = float(r["t"]) + shift
                        if "at" in r:
                            r["at"] = [float(x) + shift for x in r["at"]] if isinstance(r["at"], list) else float(r["at"]) + shift
                    cut_labelled = rep_events(cut_lines)
                    fixed = score_set(s, cut_labelled, decision_runs(cut_lines), tol)
                    for key in ("all",) + tuple(f"{b}: {v}" for b, v in session_buckets(s, usable).items()):
                        tallies["action"][key].add(fixed, True)
                    spans = (s["reps"][0][0] - tol, s["reps"][-1][1] + tol)
                    outside["action"]["the cut's rests"] += sum(1 for _, e in cut_labelled if not spans[0] <= e.at <= spans[1])
                    line += f"  --action: {fixed['count']:2d} counted, {fixed['match'].matched:2d} matched"
                rows.append(line)
    n_sets = tallies["classifier"]["all"].sets
    n_reps = tallies["classifier"]["all"].totals.repetitions
    first, last = index["seeds"][0], index["seeds"][-1]
    which = next((k for k, v in gen.SPLITS.items() if v == first), "custom")
    print(f"generated sessions in {args.dir}: {len(index['sessions'])} (seeds {first}-{last}, split {which}), "
          f"{n_sets} sets, {n_reps} repetitions, {minutes:.1f} min; tolerance {tol:g} s")
    if args.rows:
        print("\n".join(rows))
    for mode, title in modes:
        tally = tallies[mode]
        allt = tally["all"]
        t = allt.totals
        lat = np.asarray(t.latencies) if t.latencies else np.asarray([np.nan])
        print(f"\n== {title}")
        print(f"sets counted exactly: {allt.exact}/{allt.sets} = {allt.exact / allt.sets:.1%}  (target >= 95 %)")
        short = tally["length: 3-6 reps (short)"]
        if short.sets:
            print(f"short sets (3-6 repetitions) counted exactly: {short.exact}/{short.sets} = {short.exact / short.sets:.1%}  "
                  f"(target >= 95 %)")
        print(f"repetitions matched: {t.matched}/{t.repetitions} = {t.recall:.1%}  (target >= 97 %); "
              f"precision {t.matched}/{t.events} = {t.precision:.1%}")
        print(f"matched events on time: {allt.on_time}/{t.matched} = {allt.on_time / max(t.matched, 1):.1%} "
              f"(credited within {tol:g} s of the repetition's end, or of the label settling when later: "
              f"{allt.late_settled}); credited − end: median {np.median(lat):+.2f} s, p95 {np.percentile(lat, 95):+.2f} s, "
              f"max {np.max(lat):+.2f} s")
        mae, obo = scoring.mae_obo([n + d for n, d in zip(allt.truth, allt.off)], allt.truth)
        print(f"count per set (events of its label in its span): MAE {mae:.3f}  OBO {obo:.3f}")
        print(f"events in a set's span with another label: {allt.wrong}; of the set's label but unmatched: {allt.unmatched}, "
              f"{allt.early} of them within 0.5 s of a repetition's far pose and more than {tol:g} s before its end")
        print("missed repetitions by place in the set: " + ", ".join(
            f"{k} {allt.missed[k]}" for k in ("first", "2nd-3rd", "middle", "last")))
        out = outside[mode]
        print(f"events outside every set: {sum(out.values())}" + (" (" + ", ".join(f"{k} {v}" for k, v in out.most_common()) + ")" if out else ""))
        if mode == "classifier":
            d = np.asarray(settle_delays) if settle_delays else np.asarray([np.nan])
            print(f"set's exercise named (majority of the decisions over its repetitions): {allt.named}/{allt.sets} = "
                  f"{allt.named / allt.sets:.1%}; first report of the label after the first repetition began: "
                  f"median {np.median(d):.2f} s, p90 {np.percentile(d, 90):.2f} s ({allt.sets - len(settle_delays)} sets never); "
                  f"decision time on the set's label over its repetitions: mean {np.mean(shares):.1%}, "
                  f"from 2 s (one window) into the set {np.mean(settled_shares):.1%}")
            total = sum(between.values())
            print("decision time outside the sets' repetitions: " + ", ".join(
                f"{label} {seconds / total:.1%}" for label, seconds in between.most_common()))
        for bucket in SESSION_BUCKETS:
            names = sorted(k.split(": ", 1)[1] for k in tally if k.startswith(bucket + ": "))
            print(f"by {bucket}:")
            width = max([18] + [len(name) for name in names])
            for name in names:
                print(tally[f"{bucket}: {name}"].line(name, width))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("countix")
    p.add_argument("--rows", action="store_true")
    p.add_argument("--config", default="", help='counter.Config overrides, e.g. "hysteresis=0.3"')
    p.add_argument("--phase", type=int, default=0,
                   help="source frames to shift the 30 → 15 fps subsampling by (1: the odd frames)")
    p.set_defaults(fn=cmd_countix)
    p = sub.add_parser("repcount", help="repcount_half (per-repetition bounds), label fixed, tune/report halves by subject")
    p.add_argument("--rows", action="store_true")
    p.add_argument("--config", default="", help='counter.Config overrides, e.g. "hysteresis=0.3"')
    p.add_argument("--phase", type=int, default=0,
                   help="source frames to shift the 30 → 15 fps subsampling by (1: the odd frames)")
    p.set_defaults(fn=cmd_repcount)
    p = sub.add_parser("short", help="short sets (3-6 repetitions) cut from repcount_half, label fixed")
    p.add_argument("--rows", action="store_true")
    p.add_argument("--config", default="", help='counter.Config overrides')
    p.add_argument("--tail", type=float, default=0.2, help="seconds of the clip after the last repetition (default %(default)s)")
    p.add_argument("--phase", type=int, default=0, help="as for repcount")
    p.set_defaults(fn=cmd_short)
    p = sub.add_parser("penn")
    p.add_argument("--config", default="", help='counter.Config overrides')
    p.set_defaults(fn=cmd_penn)
    p = sub.add_parser("swift")
    p.add_argument("directory")
    p.add_argument("--rows", action="store_true")
    p.set_defaults(fn=cmd_swift)
    p = sub.add_parser("replay")
    p.add_argument("--posewatch", default=".build/release/posewatch")
    p.add_argument("--rows", action="store_true")
    p.add_argument("--set", choices=("countix", "repcount"), default="countix",
                   help="countix: counts and label-timeline parity; repcount: per-repetition scoring and event parity")
    p.add_argument("--config", default="", help="counter.Config overrides for the Python side of the parity check "
                   "(the Swift side runs its defaults)")
    p.set_defaults(fn=cmd_replay)
    p = sub.add_parser("sessions", help="generated sessions (sessions.py) through posewatch replay, per set and per repetition")
    p.add_argument("--posewatch", default=".build/release/posewatch", help="the posewatch executable (default %(default)s)")
    p.add_argument("--dir", default="/tmp/posewatch-sessions", help="the sessions' folder (default %(default)s)")
    p.add_argument("--generate", action="store_true", help="(re)generate the sessions first (also done when the folder has none)")
    p.add_argument("--split", choices=["tune", "heldout"], default="heldout", help="seeds to generate (default %(default)s)")
    p.add_argument("--count", type=int, default=40, help="sessions to generate (default %(default)s)")
    p.add_argument("--first-seed", type=int, default=None, help="generate from this seed instead of the split's")
    p.add_argument("--noise", choices=("calibrated", "harsh"), default="calibrated",
                   help="the detector model the sessions are generated with (sessions.py --noise; default %(default)s)")
    p.add_argument("--tolerance", type=float, default=1.0, help="seconds (default %(default)s)")
    p.add_argument("--replay-args", default="", help="more arguments for posewatch replay (after --config /dev/null)")
    p.add_argument("--no-action", action="store_true", help="skip the label-fixed runs")
    p.add_argument("--rows", action="store_true", help="one line per set")
    p.set_defaults(fn=cmd_sessions)
    p = sub.add_parser("videos")
    p.add_argument("--command", required=True)
    p.add_argument("--convert", default="", help="command template with {clip} and {output}")
    p.add_argument("--converted-ext", default=".y4m")
    p.set_defaults(fn=cmd_videos)
    args = ap.parse_args()
    if args.what != "sessions" and not os.path.isdir(data.SHARED_DATA):
        print(f"{data.SHARED_DATA} is absent: nothing to evaluate", file=sys.stderr)
        sys.exit(0)
    args.fn(args)


if __name__ == "__main__":
    main()
