from __future__ import annotations

from xdnaforge.config.recipe import Baseline, Thresholds
from xdnaforge.hardware.bench import evaluate, noise_of

LIMITS = Thresholds(gemm_tops_min=45.0, latency_us_max=55.0, throughput_ops_min=70000.0)
BASE = Baseline(gemm_tops=51.0, latency_us=46.0, throughput_ops=80547.0, evidence="recovery")


def verdicts(current: dict[str, float], history: list[dict[str, float]]) -> dict[str, str]:
    return {m.name: m.verdict for m in evaluate(current, LIMITS, BASE, history)}


def test_the_proven_figures_are_ok() -> None:
    assert verdicts({"gemm_tops": 51.0, "latency_us": 46.0, "throughput_ops": 80547.0}, []) == {
        "gemm_tops": "ok",
        "latency_us": "ok",
        "throughput_ops": "ok",
    }


def test_thresholds_come_first() -> None:
    assert verdicts({"gemm_tops": 44.0, "latency_us": 56.0}, []) == {
        "gemm_tops": "below threshold",
        "latency_us": "above threshold",
    }


def test_a_drop_beyond_the_noise_is_a_regression_even_above_the_threshold() -> None:
    steady = [{"gemm_tops": 51.0}, {"gemm_tops": 50.8}, {"gemm_tops": 51.2}]
    assert verdicts({"gemm_tops": 47.0}, steady) == {"gemm_tops": "regression"}
    assert verdicts({"gemm_tops": 50.0}, steady) == {"gemm_tops": "ok"}


def test_latency_regresses_upwards() -> None:
    steady = [{"latency_us": 46.0}, {"latency_us": 46.5}, {"latency_us": 45.8}]
    assert verdicts({"latency_us": 50.0}, steady) == {"latency_us": "regression"}
    assert verdicts({"latency_us": 40.0}, steady) == {"latency_us": "improved"}


def test_without_history_the_baseline_is_the_reference() -> None:
    assert verdicts({"throughput_ops": 74000.0}, []) == {"throughput_ops": "regression"}
    metric = evaluate({"throughput_ops": 74000.0}, LIMITS, BASE, [])[0]
    assert metric.reference == 80547.0


def test_noisy_history_widens_the_tolerance() -> None:
    noisy = [40.0, 50.0, 60.0, 45.0, 55.0]
    assert noise_of(noisy) > 0.2
    assert noise_of([51.0, 51.0]) == 0.05
