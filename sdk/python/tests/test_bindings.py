"""The committed bindings match what the generator writes from the live catalog, and they start runs."""

from __future__ import annotations

from pathlib import Path

from conftest import Stack

from workflow_engine import AsyncWorkflowEngine, WorkflowEngine
from workflow_engine.generate import generate_bindings
from workflow_engine.generated import esign_resources_get_resource_information as resources

GENERATED = Path(__file__).resolve().parent.parent / "workflow_engine" / "generated"


def test_committed_bindings_match_the_live_catalog(client: WorkflowEngine) -> None:
    fresh = generate_bindings(client)
    committed = {p.name: p.read_text() for p in GENERATED.glob("*.py")}
    assert sorted(fresh) == sorted(committed), "a workflow type was added or removed: regenerate (README, Python SDK)"
    stale = [name for name, text in fresh.items() if committed[name] != text]
    assert not stale, f"out of date, regenerate (README, Python SDK): {stale}"


def test_a_binding_starts_a_typed_run_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = resources.start(client, resources.Input.model_validate({"base_url": stack.esign_url}))
    output = resources.output(run.wait(timeout=45))
    assert output.status_code == 200
    assert run.get().workflow_type == resources.WORKFLOW_TYPE


async def test_a_binding_starts_a_typed_run_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await resources.start_async(aclient, resources.Input.model_validate({"base_url": stack.esign_url}))
    assert resources.output(await run.wait(timeout=45)).status_code == 200
