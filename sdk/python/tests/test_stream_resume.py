"""events() resumes with Last-Event-ID after the connection drops: no gap, no duplicate."""

from __future__ import annotations

from conftest import RESOURCES, CuttingProxy, Stack

from workflow_engine import AsyncWorkflowEngine, CompletedEvent, RunEvent, TransitionEvent, WorkflowEngine


def _check_resumed(events: list[RunEvent], expected_seqs: list[int], proxy: CuttingProxy) -> None:
    assert proxy.cut, "the proxy never cut a stream"
    assert [e.seq for e in events if isinstance(e, TransitionEvent)] == expected_seqs
    assert sum(isinstance(e, CompletedEvent) for e in events) == 1
    assert isinstance(events[-1], CompletedEvent)
    streams = [r for r in proxy.requests if "/stream" in r.split("\r\n", 1)[0]]
    assert len(streams) == 2
    assert "last-event-id" not in streams[0].lower()
    assert "last-event-id: 1\r\n" in streams[1].lower()


def test_events_resume_after_a_cut_stream_sync(
    client: WorkflowEngine, stack: Stack, cutting_proxy: CuttingProxy
) -> None:
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    run.wait(timeout=45)
    expected = [t.seq for t in run.history().transitions]
    with WorkflowEngine(cutting_proxy.url, stack.token) as through_proxy:
        events = list(through_proxy.workflows.handle(run.workflow_id).events())
    _check_resumed(events, expected, cutting_proxy)


async def test_events_resume_after_a_cut_stream_async(
    aclient: AsyncWorkflowEngine, stack: Stack, cutting_proxy: CuttingProxy
) -> None:
    run = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    await run.wait(timeout=45)
    expected = [t.seq for t in (await run.history()).transitions]
    async with AsyncWorkflowEngine(cutting_proxy.url, stack.token) as through_proxy:
        events = [e async for e in through_proxy.workflows.handle(run.workflow_id).events()]
    _check_resumed(events, expected, cutting_proxy)
