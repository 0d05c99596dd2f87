"""Benchmark figures: thresholds, baseline, recent history and the regression verdict; pure."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdnaforge.config.recipe import Baseline, Thresholds

HIGHER_IS_BETTER = {"gemm_tops": True, "latency_us": False, "throughput_ops": True}
UNITS = {"gemm_tops": "TOPS", "latency_us": "us", "throughput_ops": "op/s"}
MIN_NOISE = 0.05  # run-to-run variation of xrt-smi validate is a few percent
HISTORY_WINDOW = 10


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    value: float
    unit: str
    threshold: float | None
    baseline: float | None
    previous: float | None
    reference: float | None  # what the regression verdict compares with
    noise: float  # relative tolerance used
    verdict: str  # ok, improved, regression, below threshold, above threshold

    @property
    def failed(self) -> bool:
        return self.verdict in ("regression", "below threshold", "above threshold")

    def as_record(self) -> dict[str, object]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "threshold": self.threshold,
            "baseline": self.baseline,
            "previous": self.previous,
            "reference": self.reference,
            "noise": round(self.noise, 4),
            "verdict": self.verdict,
        }


def _threshold(name: str, thresholds: Thresholds) -> float | None:
    return {
        "gemm_tops": thresholds.gemm_tops_min,
        "latency_us": thresholds.latency_us_max,
        "throughput_ops": thresholds.throughput_ops_min,
    }[name]


def _baseline(name: str, baseline: Baseline | None) -> float | None:
    if baseline is None:
        return None
    return {
        "gemm_tops": baseline.gemm_tops,
        "latency_us": baseline.latency_us,
        "throughput_ops": baseline.throughput_ops,
    }[name]


def noise_of(values: Sequence[float]) -> float:
    """Relative noise: three median absolute deviations, at least MIN_NOISE."""
    if len(values) < 3:
        return MIN_NOISE
    middle = statistics.median(values)
    if middle == 0:
        return MIN_NOISE
    spread = statistics.median(abs(v - middle) for v in values)
    return max(MIN_NOISE, 3 * spread / abs(middle))


def evaluate(
    current: Mapping[str, float],
    thresholds: Thresholds,
    baseline: Baseline | None,
    history: Sequence[Mapping[str, float]],
) -> list[Metric]:
    """Judge each figure: threshold first, then against recent history (or the baseline)."""
    metrics = []
    for name in sorted(current):
        if name not in HIGHER_IS_BETTER:
            continue
        value = current[name]
        better_up = HIGHER_IS_BETTER[name]
        past = [h[name] for h in history[-HISTORY_WINDOW:] if name in h]
        reference = statistics.median(past) if len(past) >= 3 else _baseline(name, baseline)
        noise = noise_of(past)
        limit = _threshold(name, thresholds)
        verdict = "ok"
        if limit is not None and (value < limit if better_up else value > limit):
            verdict = "below threshold" if better_up else "above threshold"
        elif reference:
            change = (value - reference) / reference
            if (change < -noise) if better_up else (change > noise):
                verdict = "regression"
            elif (change > noise) if better_up else (change < -noise):
                verdict = "improved"
        metrics.append(
            Metric(
                name=name,
                value=value,
                unit=UNITS[name],
                threshold=limit,
                baseline=_baseline(name, baseline),
                previous=past[-1] if past else None,
                reference=reference,
                noise=noise,
                verdict=verdict,
            )
        )
    return metrics
