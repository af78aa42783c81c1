"""Start, stream, wait, retry and list runs against the e-signature double, with both clients."""

from __future__ import annotations

import pytest
from conftest import DELETE, RESOURCES, Stack, delete_input, unique

from workflow_engine import (
    AsyncWorkflowEngine,
    CompletedEvent,
    FailedEvent,
    RunEvent,
    TransitionEvent,
    WaitTimeoutError,
    WorkflowEngine,
    WorkflowFailedError,
)


def _assert_completed_stream(events: list[RunEvent], workflow_id: str) -> None:
    transitions = [e for e in events if isinstance(e, TransitionEvent)]
    assert [t.seq for t in transitions] == list(range(1, len(transitions) + 1))
    assert transitions[0].from_ == "PENDING"
    assert transitions[-1].to == "COMPLETED"
    end = events[-1]
    assert isinstance(end, CompletedEvent)
    assert end.workflow_id == workflow_id
    assert end.state_data["status_code"] == 200
    assert end.state_data["response"]["resources"]


def test_start_and_stream_to_completion_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    assert run.workflow_id.startswith("wf_")
    events = list(run.events())
    _assert_completed_stream(events, run.workflow_id)
    got = run.get()
    assert got.status == "COMPLETED"
    assert got.state_data == events[-1].state_data  # type: ignore[union-attr]
    history = client.workflows.history(run.workflow_id)
    assert [t.seq for t in history.transitions] == [e.seq for e in events if isinstance(e, TransitionEvent)]


async def test_start_and_stream_to_completion_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    events = [e async for e in run.events()]
    _assert_completed_stream(events, run.workflow_id)
    assert (await run.get()).status == "COMPLETED"
    history = await aclient.workflows.history(run.workflow_id)
    assert [t.seq for t in history.transitions] == [e.seq for e in events if isinstance(e, TransitionEvent)]


def test_wait_returns_state_data_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    data = run.wait(timeout=45)
    assert data["status_code"] == 200


async def test_wait_returns_state_data_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    assert (await run.wait(timeout=45))["status_code"] == 200


def test_wait_on_failing_run_then_retry_after_the_double_recovers_sync(client: WorkflowEngine, stack: Stack) -> None:
    # `once401`: the double refuses the first call with a (non-retryable) 401 and accepts the next.
    run = client.workflows.start(DELETE, delete_input(stack, "once401"))
    with pytest.raises(WorkflowFailedError) as failed:
        run.wait(timeout=45)
    assert failed.value.workflow_id == run.workflow_id
    assert failed.value.fields["failure_type"] == "unauthorized"
    assert failed.value.fields["failed_step"] == "execute"
    assert failed.value.state_data["status_code"] == 401
    assert failed.value.message == failed.value.fields["failure_reason"]
    events = list(client.workflows.stream(run.workflow_id))
    assert isinstance(events[-1], FailedEvent)
    assert events[-1].error["failure_type"] == "unauthorized"

    retried = run.retry()
    assert retried.workflow_id == run.workflow_id
    assert retried.wait(timeout=45)["status_code"] == 204
    assert run.get().attempt == 2


async def test_wait_on_failing_run_then_retry_after_the_double_recovers_async(
    aclient: AsyncWorkflowEngine, stack: Stack
) -> None:
    run = await aclient.workflows.start(DELETE, delete_input(stack, "once401"))
    with pytest.raises(WorkflowFailedError) as failed:
        await run.wait(timeout=45)
    assert failed.value.fields["failure_type"] == "unauthorized"
    events = [e async for e in aclient.workflows.stream(run.workflow_id)]
    assert isinstance(events[-1], FailedEvent)
    retried = await aclient.workflows.retry(run.workflow_id)
    assert (await retried.wait(timeout=45))["status_code"] == 204
    assert (await run.get()).attempt == 2


def test_wait_timeout_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(DELETE, delete_input(stack, "hang"))
    with pytest.raises(WaitTimeoutError):
        run.wait(timeout=0.5)


async def test_wait_timeout_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await aclient.workflows.start(DELETE, delete_input(stack, "hang"))
    with pytest.raises(WaitTimeoutError):
        await run.wait(timeout=0.5)


def test_idempotency_key_sync(client: WorkflowEngine, stack: Stack) -> None:
    key = unique("key")
    first = client.workflows.start(RESOURCES, {"base_url": stack.esign_url}, idempotency_key=key)
    second = client.workflows.start(RESOURCES, {"base_url": stack.esign_url}, idempotency_key=key)
    assert first.workflow_id == second.workflow_id
    assert (first.replayed, second.replayed) == (False, True)


async def test_idempotency_key_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    key = unique("key")
    first = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url}, idempotency_key=key)
    second = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url}, idempotency_key=key)
    assert first.workflow_id == second.workflow_id
    assert (first.replayed, second.replayed) == (False, True)


def test_list_iterates_over_every_page_sync(client: WorkflowEngine, stack: Stack) -> None:
    started = [client.workflows.start(RESOURCES, {"base_url": stack.esign_url}).workflow_id for _ in range(3)]
    for workflow_id in started:
        client.workflows.handle(workflow_id).wait(timeout=45)
    listed = [r.workflow_id for r in client.workflows.list(workflow_type=RESOURCES, page_size=1)]
    assert len(listed) == len(set(listed))
    assert set(started) <= set(listed)
    completed = list(client.workflows.list(status="COMPLETED", workflow_type=RESOURCES, page_size=2))
    assert all(r.status == "COMPLETED" for r in completed)


async def test_list_iterates_over_every_page_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    started = [(await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url})).workflow_id for _ in range(3)]
    for workflow_id in started:
        await aclient.workflows.handle(workflow_id).wait(timeout=45)
    listed = [r.workflow_id async for r in aclient.workflows.list(workflow_type=RESOURCES, page_size=1)]
    assert len(listed) == len(set(listed))
    assert set(started) <= set(listed)
