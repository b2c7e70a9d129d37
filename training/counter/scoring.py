"""Scoring counted repetitions against annotated ones, per repetition (issue 23).

A counted event has two times: when the repetition happened (`at`, what the counter says it saw)
and when it was credited (`credited`, when the user saw the LED wink and the journal entry; later
than `at` when the classifier named the exercise after the set had begun). An annotated repetition
is a (start, end) pair in seconds.

- Matching: each event is matched to at most one annotated repetition and each repetition to at
  most one event, an event only to a repetition whose end is within `tolerance` (1 s) of the
  event's `at`. Events and repetition ends are points on one time axis and every event's window has
  the same width, so matching both in time order (the earliest unmatched end that is still in reach)
  gives a largest matching.
- precision = matched events / events, recall = matched repetitions / repetitions.
- latency = credited − end of the matched repetition (negative: the event came before the end,
  which counting at the turning point of a repetition does).
- counts: `whole` = every event; `in_span` = events whose `at` lies within the annotated set
  (first start − tolerance to last end + tolerance), for sequences where only the set is annotated.

Used by `evaluate.py repcount` and `evaluate.py sessions`; nothing here reads data.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TOLERANCE_S = 1.0


@dataclass
class Event:
    at: float        # when the repetition happened (seconds)
    credited: float  # when it was counted for the user (>= at)


@dataclass
class Match:
    events: int
    repetitions: int
    matched: int
    latencies: list[float] = field(default_factory=list)  # credited - end, per matched pair
    offsets: list[float] = field(default_factory=list)    # at - end, per matched pair


def match(events: list[Event], repetitions: list[tuple[float, float]], tolerance: float = TOLERANCE_S) -> Match:
    """The largest one-to-one matching of events to repetition ends within `tolerance` seconds."""
    order = sorted(events, key=lambda e: e.at)
    ends = sorted(repetitions, key=lambda r: r[1])
    result = Match(events=len(order), repetitions=len(ends), matched=0)
    j = 0
    for event in order:
        # Ends too early for this event are too early for every later one too.
        while j < len(ends) and ends[j][1] < event.at - tolerance:
            j += 1
        if j < len(ends) and ends[j][1] <= event.at + tolerance:
            result.matched += 1
            result.latencies.append(event.credited - ends[j][1])
            result.offsets.append(event.at - ends[j][1])
            j += 1
    return result


def in_span(events: list[Event], repetitions: list[tuple[float, float]], tolerance: float = TOLERANCE_S) -> list[Event]:
    """The events inside the annotated set (with `tolerance` on both sides)."""
    if not repetitions:
        return []
    first = min(r[0] for r in repetitions) - tolerance
    last = max(r[1] for r in repetitions) + tolerance
    return [e for e in events if first <= e.at <= last]


def mae_obo(predicted: list[int], truth: list[int]) -> tuple[float, float]:
    """Mean |predicted − truth| / truth and the share within one repetition (RepCount's metrics)."""
    p = np.asarray(predicted, dtype=float)
    t = np.asarray(truth, dtype=float)
    if len(t) == 0:
        return float("nan"), float("nan")
    return float(np.mean(np.abs(p - t) / np.maximum(t, 1))), float(np.mean(np.abs(p - t) <= 1))


@dataclass
class Totals:
    """Per-repetition figures summed over sequences."""
    events: int = 0
    repetitions: int = 0
    matched: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, m: Match) -> None:
        self.events += m.events
        self.repetitions += m.repetitions
        self.matched += m.matched
        self.latencies.extend(m.latencies)

    @property
    def precision(self) -> float:
        return self.matched / self.events if self.events else float("nan")

    @property
    def recall(self) -> float:
        return self.matched / self.repetitions if self.repetitions else float("nan")

    def line(self) -> str:
        lat = np.asarray(self.latencies) if self.latencies else np.asarray([np.nan])
        return (f"precision {self.precision:.3f}  recall {self.recall:.3f}  "
                f"latency median {np.median(lat):+.2f} s  p95 {np.percentile(lat, 95):+.2f} s  max {np.max(lat):+.2f} s")
