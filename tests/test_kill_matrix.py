"""Proof the suite catches bugs: every faulty variant of the Python sink fails a claimed property
in at least two of the suite's bug-hunting scenarios, and the correct sink fails none."""
from __future__ import annotations

import time
import warnings

from adapters.pysink import VARIANTS
from conformance.catalog.named import KILL_SCENARIOS
from conformance.judging.claims import PROPERTIES
from conformance.calibration.kill_matrix import (AIMED, KILLS_WANTED, kill_matrix, killers, play_order, render,
                                                 stale_aims, weak)


def test_every_variant_is_killed_and_the_correct_sink_is_clean(tmp_path, capsys):
    started = time.monotonic()
    matrix = kill_matrix(["correct", *VARIANTS], out=tmp_path)
    with capsys.disabled():
        print("\nkill matrix (variant x claimed property), " f"{time.monotonic() - started:.0f}s:")
        print(render(matrix, list(PROPERTIES)))
    assert matrix["correct"] == {}, matrix["correct"]
    thin = {v: killers(matrix[v]) for v in weak(matrix)}
    assert not thin, f"variants fewer than {KILLS_WANTED} scenarios caught: {thin}"
    # an aim that missed costs only time (the row went on through the catalog): say where
    if stale := stale_aims(matrix):
        warnings.warn(f"AIMED names scenarios that no longer kill their variant: {stale}", stacklevel=1)


def test_aims_name_real_variants_and_kill_scenarios():
    """A misspelt aim would silently fall back to the whole catalog: every variant has its
    KILLS_WANTED aims, each a kill scenario, and its row plays them first, then the rest."""
    assert set(AIMED) == set(VARIANTS), ("give each new variant the scenarios that kill it in AIMED "
                                         "(a row without aims plays the whole catalog)", set(AIMED) ^ set(VARIANTS))
    for variant, aims in AIMED.items():
        assert len(set(aims)) == KILLS_WANTED and set(aims) <= set(KILL_SCENARIOS), (variant, aims)
        order = play_order(variant, list(KILL_SCENARIOS))
        assert order[:len(aims)] == list(aims) and sorted(order) == sorted(KILL_SCENARIOS)
    assert play_order("correct", list(KILL_SCENARIOS)) == list(KILL_SCENARIOS)
