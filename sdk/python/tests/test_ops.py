"""Cancel and schedules (issue 16's contract), with both clients.

Written against the shared contract; the endpoints come from the ops-cancel branch.
"""

from __future__ import annotations

import time

import pytest
from conftest import DELETE, RESOURCES, Stack, delete_input

from workflow_engine import (
    AsyncWorkflowEngine,
    ConflictError,
    FailedEvent,
    NotFoundError,
    ValidationError,
    WorkflowEngine,
    WorkflowFailedError,
)
from workflow_engine.models import Run


def test_cancel_a_running_run_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(DELETE, delete_input(stack, "hang"))
    answer = run.cancel()
    assert (answer.workflow_id, answer.cancel_requested) == (run.workflow_id, True)
    with pytest.raises(WorkflowFailedError) as failed:
        run.wait(timeout=45)
    assert failed.value.fields["failure_type"] == "cancelled"
    assert run.get().status == "CANCELLED"
    events = list(run.events())
    assert isinstance(events[-1], FailedEvent)
    assert events[-1].error["failure_type"] == "cancelled"
    assert run.workflow_id in {r.workflow_id for r in client.workflows.list(status="CANCELLED")}
    with pytest.raises(ConflictError) as again:
        client.workflows.cancel(run.workflow_id)
    assert again.value.code == "run_not_running"


async def test_cancel_a_running_run_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await aclient.workflows.start(DELETE, delete_input(stack, "hang"))
    assert (await aclient.workflows.cancel(run.workflow_id)).cancel_requested is True
    with pytest.raises(WorkflowFailedError) as failed:
        await run.wait(timeout=45)
    assert failed.value.fields["failure_type"] == "cancelled"
    assert run.workflow_id in {r.workflow_id async for r in aclient.workflows.list(status="CANCELLED")}
    with pytest.raises(ConflictError):
        await run.cancel()


def test_cancel_of_a_finished_or_foreign_run_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    run.wait(timeout=45)
    with pytest.raises(ConflictError) as err:
        run.cancel()
    assert err.value.code == "run_not_running"
    with WorkflowEngine(stack.api_url, stack.other_token) as other, pytest.raises(NotFoundError):
        other.workflows.cancel(run.workflow_id)


def test_schedule_lifecycle_sync(client: WorkflowEngine, stack: Stack) -> None:
    schedule = client.schedules.create(
        DELETE, delete_input(stack, "ok"), interval_seconds=3600, overlap="skip", paused=True
    )
    assert schedule.schedule_id.startswith("sch_")
    assert (schedule.interval_seconds, schedule.cron, schedule.paused) == (3600, None, True)
    assert schedule.timezone == "UTC"
    assert schedule.initial_data["api_token"] == "[redacted]"
    assert schedule.schedule_id in {s.schedule_id for s in client.schedules.list()}
    assert client.schedules.get(schedule.schedule_id).paused is True
    assert client.schedules.unpause(schedule.schedule_id).paused is False
    assert client.schedules.pause(schedule.schedule_id).paused is True
    triggered = client.schedules.trigger(schedule.schedule_id)
    assert (triggered.schedule_id, triggered.triggered) == (schedule.schedule_id, True)
    deadline = time.monotonic() + 30
    runs: list[Run] = []
    while not runs and time.monotonic() < deadline:
        runs = list(client.workflows.list(schedule_id=schedule.schedule_id))
        time.sleep(0.3)
    assert runs, "the triggered run never appeared under schedule_id"
    with WorkflowEngine(stack.api_url, stack.other_token) as other, pytest.raises(NotFoundError):
        other.schedules.get(schedule.schedule_id)
    client.schedules.delete(schedule.schedule_id)
    with pytest.raises(NotFoundError):
        client.schedules.get(schedule.schedule_id)


async def test_schedule_lifecycle_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    schedule = await aclient.schedules.create(RESOURCES, {"base_url": stack.esign_url}, cron="0 3 * * *")
    assert (schedule.cron, schedule.overlap, schedule.paused) == ("0 3 * * *", "skip", False)
    assert schedule.next_action_times
    assert schedule.schedule_id in {s.schedule_id for s in await aclient.schedules.list()}
    assert (await aclient.schedules.pause(schedule.schedule_id)).paused is True
    assert (await aclient.schedules.trigger(schedule.schedule_id)).triggered is True
    await aclient.schedules.delete(schedule.schedule_id)
    with pytest.raises(NotFoundError):
        await aclient.schedules.get(schedule.schedule_id)


def test_invalid_schedule_names_the_field_sync(client: WorkflowEngine, stack: Stack) -> None:
    with pytest.raises(ValidationError) as err:
        client.schedules.create(RESOURCES, {"base_url": stack.esign_url}, cron="not a cron")
    assert "cron" in {f.field for f in err.value.fields}


async def test_invalid_schedule_names_the_field_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    with pytest.raises(ValidationError) as err:
        await aclient.schedules.create(RESOURCES, {"base_url": 5}, interval_seconds=60)
    assert "initial_data.base_url" in {f.field for f in err.value.fields}
