"""Proof the suite catches bugs: every faulty variant of the Python sink fails a claimed property
in at least two of the suite's bug-hunting scenarios, and the correct sink fails none."""
from __future__ import annotations

import time
import warnings

from adapters.pysink import VARIANTS
from conformance.catalog.named import KILL_SCENARIOS
from conformance.judging.claims import PROPERTIES
from conformance.calibration.kill_matrix import (AIMED, KILLS_WANTED, kill_matrix, killers, merged_row, play_order,
                                                 render, row_chunks, stale_aims, weak)


def test_every_variant_is_killed_and_the_correct_sink_is_clean(tmp_path, capsys):
    started = time.monotonic()
    matrix = kill_matrix(["correct", *VARIANTS], out=tmp_path, workers=1)
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


def test_worker_processes_deal_out_the_correct_row_and_merge_it(tmp_path):
    """The command's way (`--workers`, 4 by default): rows in spawned processes, the correct
    sink's row dealt out among them in pieces. The test above plays in its own process, the
    cheapest on a 2-core machine already running another test module."""
    names = ["late-records-at-hour-edges", "crash-mid-stream", "crash-during-complete"]
    matrix = kill_matrix(["correct", "last-record-missing"], scenarios=names, out=tmp_path, workers=2)
    assert list(matrix) == ["correct", "last-record-missing"]
    assert matrix["correct"] == {}
    assert killers(matrix["last-record-missing"]) == list(AIMED["last-record-missing"]) == names[:2]
    assert all((tmp_path / "correct" / n).is_dir() for n in names)  # every piece of the row was played


def test_a_row_played_in_pieces_reads_as_one_played_in_order():
    names = ["a", "b", "c", "d"]
    pieces = [{"no-loss": ["c"], "naming": ["c"]}, {"rotation": ["b"], "no-loss": ["a", "d"]}]
    assert merged_row(pieces, names) == {"no-loss": ["a", "c", "d"], "rotation": ["b"], "naming": ["c"]}
    assert list(merged_row(pieces, names)) == ["no-loss", "rotation", "naming"]
    assert row_chunks("correct", names, 3) == [["a", "d"], ["b"], ["c"]]
    assert row_chunks("last-record-missing", names, 3) == [names] and row_chunks("correct", names, 1) == [names]


def test_an_aim_that_misses_falls_back_to_the_catalog(tmp_path, monkeypatch):
    """An aim is where a row looks first, not a kill: reset-as-success survives every scenario
    before the S3 reset ones (a7de462's matrix in catalog order), so aimed at one of those its row
    goes on through the rest until two real kills, and stale_aims names the miss."""
    from conformance.calibration import kill_matrix as km

    monkeypatch.setitem(km.AIMED, "reset-as-success", ("late-records-at-hour-edges", "s3-reset-mid-part"))
    names = ["late-records-at-hour-edges", "crash-mid-stream", "s3-reset-mid-complete", "s3-reset-mid-part"]
    assert play_order("reset-as-success", names) == [names[0], names[3], names[1], names[2]]
    matrix = kill_matrix(["reset-as-success"], scenarios=names, out=tmp_path, workers=1)
    assert sorted(killers(matrix["reset-as-success"])) == sorted(names[2:])
    assert stale_aims(matrix) == {"reset-as-success": ["late-records-at-hour-edges"]}
