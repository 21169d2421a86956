"""The last wait for quiet leaves the connector time to catch up over files already in S3
(reference_impl.catch_up, R8.2, R1.5): under conditional writes each such file costs a 412 and
one retry.backoff.ms, so a zombie's files under flush.size=1 take a backoff per record (seen on
12.1.9 under examples/user-configs/default-topics-orders.json: ten 412s, one every 6.0 s)."""
from __future__ import annotations

from pathlib import Path

from conformance.catalog.named import ALL_NAMED
from conformance.inputs.connector_config import sink_config
from conformance.playing.runner import final_quiet_timeout_s
from reference_impl.catch_up import MOST_S, catch_up_allowance_s
from reference_impl.config import load_config_text

USERS = Path(__file__).resolve().parent.parent / "examples" / "user-configs" / "default-topics-orders.json"


def _users(**extra: str):
    cfg = {**load_config_text(USERS.read_text())[1], **extra}
    return sink_config(cfg, "12.1.9")


def test_R8_2_a_zombies_files_under_conditional_writes_cost_one_backoff_per_record():
    cfg = _users()
    assert cfg.conditional_writes_active and cfg.flush_size == 1
    zombie = ALL_NAMED["zombie-task"]()
    allowance = catch_up_allowance_s(cfg, len(zombie.records))
    assert allowance == len(zombie.records) * (5.0 + 1.0)
    # the run that was never quiet: ten 412s, one every 6.0 s, after the 60 s wait had started
    assert final_quiet_timeout_s(60, cfg, zombie.faults, len(zombie.records), True) >= 60 + 10 * 6.0


def test_R8_2_the_backoff_is_the_configs_retry_backoff_ms():
    assert catch_up_allowance_s(_users(**{"retry.backoff.ms": "1000"}), 10) == 10 * 2.0


def test_R8_1_without_conditional_writes_an_existing_object_is_overwritten_no_catch_up():
    zombie = ALL_NAMED["zombie-task"]()
    own = sink_config(zombie.connector, "12.1.9")  # no scheduled rotation: conditional writes off
    assert not own.conditional_writes_active
    assert catch_up_allowance_s(own, len(zombie.records)) == 0.0
    keys = _users(**{"store.kafka.keys": "true"})
    assert catch_up_allowance_s(keys, len(zombie.records)) == 0.0
    assert final_quiet_timeout_s(60, own, zombie.faults, len(zombie.records), True) == 60


def test_the_allowance_is_bounded_and_only_for_the_connector_on_kafka_connect_after_a_fault():
    cfg = _users()
    assert catch_up_allowance_s(cfg, 10_000) == MOST_S
    zombie = ALL_NAMED["zombie-task"]()
    assert final_quiet_timeout_s(60, cfg, zombie.faults, 20, False) == 60  # the Python sink: its own clock
    assert final_quiet_timeout_s(60, cfg, [], 20, True) == 60  # nothing re-read without a fault
    assert final_quiet_timeout_s(60, None, zombie.faults, 20, True) == 60
