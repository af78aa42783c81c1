"""Each error status of the live API comes back as its typed exception, with both clients."""

from __future__ import annotations

import pytest
from conftest import RESOURCES, Stack

from workflow_engine import (
    AsyncWorkflowEngine,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
    WorkflowEngine,
    WorkflowEngineError,
)
from workflow_engine import _calls as calls

# No SDK operation on the built-in catalog can be refused with 403 (organization_mismatch needs a
# type whose input declares organization_uuid): the one 403 the service gives, a CORS preflight of
# the Temporal codec from a foreign origin, goes through the same transport every call uses.
_FORBIDDEN = calls.Call(
    "OPTIONS",
    "/api/temporal-codec/decode",
    lambda body, _headers: body,
    headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
)


def test_401_sync(stack: Stack) -> None:
    with WorkflowEngine(stack.api_url, "wes_not_a_token") as engine, pytest.raises(AuthenticationError) as err:
        engine.me()
    assert err.value.status == 401
    assert isinstance(err.value, WorkflowEngineError)


async def test_401_async(stack: Stack) -> None:
    async with AsyncWorkflowEngine(stack.api_url, "wes_not_a_token") as engine:
        with pytest.raises(AuthenticationError):
            await engine.catalog.list_types()


def test_403_sync(client: WorkflowEngine) -> None:
    with pytest.raises(PermissionDeniedError) as err:
        client._t.call(_FORBIDDEN)
    assert (err.value.status, err.value.code) == (403, "origin_not_allowed")


async def test_403_async(aclient: AsyncWorkflowEngine) -> None:
    with pytest.raises(PermissionDeniedError) as err:
        await aclient._t.call(_FORBIDDEN)
    assert err.value.code == "origin_not_allowed"


def test_404_sync(client: WorkflowEngine, stack: Stack) -> None:
    with pytest.raises(NotFoundError) as err:
        client.workflows.get("wf_does_not_exist")
    assert err.value.code == "not_found"
    # Another organization's run is just as unknown.
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    with WorkflowEngine(stack.api_url, stack.other_token) as other, pytest.raises(NotFoundError):
        other.workflows.get(run.workflow_id)


async def test_404_async(aclient: AsyncWorkflowEngine) -> None:
    with pytest.raises(NotFoundError):
        await aclient.workflows.history("wf_does_not_exist")


def test_409_sync(client: WorkflowEngine, stack: Stack) -> None:
    run = client.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    run.wait(timeout=45)
    with pytest.raises(ConflictError) as err:
        run.retry()
    assert (err.value.status, err.value.code) == (409, "not_failed")


async def test_409_async(aclient: AsyncWorkflowEngine, stack: Stack) -> None:
    run = await aclient.workflows.start(RESOURCES, {"base_url": stack.esign_url})
    await run.wait(timeout=45)
    with pytest.raises(ConflictError) as err:
        await run.retry()
    assert err.value.code == "not_failed"


def test_422_names_the_field_and_rule_sync(client: WorkflowEngine) -> None:
    before = [r.workflow_id for r in client.workflows.list(workflow_type=RESOURCES)]
    with pytest.raises(ValidationError) as err:
        client.workflows.start(RESOURCES, {"base_url": "not a url", "unexpected": 1})
    assert err.value.code == "validation_failed"
    fields = {f.field: f.rule for f in err.value.fields}
    assert "initial_data.base_url" in fields
    assert "initial_data.unexpected" in fields
    assert [r.workflow_id for r in client.workflows.list(workflow_type=RESOURCES)] == before


async def test_422_names_the_field_and_rule_async(aclient: AsyncWorkflowEngine) -> None:
    with pytest.raises(ValidationError) as err:
        await aclient.workflows.start(RESOURCES, {"base_url": 5})
    assert [(f.field, f.rule) for f in err.value.fields][0][0] == "initial_data.base_url"


def test_429_sync(stack: Stack) -> None:
    # The extra API allows two reads a minute per token; max_retries=0 surfaces the 429 at once.
    with WorkflowEngine(stack.limited_api_url, stack.limited_tokens[0], max_retries=0) as engine:
        with pytest.raises(RateLimitError) as err:
            for _ in range(5):
                engine.me()
    assert err.value.status == 429
    assert err.value.retry_after is not None and err.value.retry_after > 0


async def test_429_async(stack: Stack) -> None:
    async with AsyncWorkflowEngine(stack.limited_api_url, stack.limited_tokens[1], max_retries=0) as engine:
        with pytest.raises(RateLimitError) as err:
            for _ in range(5):
                await engine.me()
    assert err.value.retry_after is not None and err.value.retry_after > 0
