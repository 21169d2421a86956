"""How the Kafka Connect target tells that a task it restarted (a restart-task, a config update)
is back, from outside the worker: by its consumer's client id in the sink's group."""
from adapters.connect.faults import consumer_client_id, task_replaced

NAME = "sinkcheck-two-tasks-r1"
T0, T1 = consumer_client_id(NAME, 0), consumer_client_id(NAME, 1)


def test_consumer_client_id_is_connects_name_for_a_tasks_consumer():
    assert consumer_client_id("orders-sink", 3) == "connector-consumer-orders-sink-3"


def test_restart_of_task_1_is_seen_while_task_0_keeps_its_member():
    # tasks.max=2: restarting task 1 leaves task 0's member in the group (it used to wait for
    # a group with none of the members before, which task 0's member never leaves)
    before = {"m0": T0, "m1": T1}
    assert not task_replaced(1, NAME, before, {"m0": T0, "m1": T1}, "RUNNING", "RUNNING")
    assert not task_replaced(1, NAME, before, {"m0": T0}, "RUNNING", "RUNNING")  # left, not back yet
    assert task_replaced(1, NAME, before, {"m0": T0, "m1b": T1}, "RUNNING", "RUNNING")


def test_a_new_member_of_another_task_is_not_the_restarted_one():
    before = {"m0": T0, "m1": T1}
    assert not task_replaced(1, NAME, before, {"m0b": T0, "m1": T1}, "RUNNING", "RUNNING")


def test_a_task_with_no_member_before_is_back_when_its_consumer_joins():
    # the group was empty when the config changed (the task had not joined yet)
    assert not task_replaced(0, NAME, {}, {}, "RUNNING", "RUNNING")
    assert task_replaced(0, NAME, {}, {"m0": T0}, "RUNNING", "RUNNING")


def test_a_failed_task_has_no_instance_to_replace():
    # a record killed the task before the config update: its restart reads from the committed
    # offsets and may die again at once, before any member of it is seen
    assert task_replaced(0, NAME, {}, {}, "FAILED", "FAILED")
    # it ran, and the restarted instance died: nothing is left consuming
    assert task_replaced(0, NAME, {"m0": T0}, {}, "RUNNING", "FAILED")
