"""Retries and error mapping of the transport, on httpx's MockTransport (no service needed)."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest

from workflow_engine import (
    APIConnectionError,
    APIError,
    AsyncWorkflowEngine,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    ValidationError,
    WorkflowEngine,
    WorkflowEngineError,
)
from workflow_engine import _calls as calls
from workflow_engine.models import ConnectionCreated

ME = {"user_id": "u", "organization_uuid": "org_x", "username": "n", "token_type": "member", "principal_type": "user"}


def _error(status: int, code: str, details: object = None, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(
        status, json={"error": {"code": code, "message": f"{code}!", "details": details}}, headers=headers
    )


class Script:
    """Answers requests from a list, recording them."""

    def __init__(self, *answers: httpx.Response):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answers.pop(0)


def _sync(script: Script, max_retries: int = 3) -> WorkflowEngine:
    return WorkflowEngine("http://engine", "tok", max_retries=max_retries, transport=httpx.MockTransport(script))


def _async(script: Script, max_retries: int = 3) -> AsyncWorkflowEngine:
    return AsyncWorkflowEngine("http://engine", "tok", max_retries=max_retries, transport=httpx.MockTransport(script))


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "invalid_cursor", BadRequestError),
        (401, "unauthorized", AuthenticationError),
        (403, "forbidden", PermissionDeniedError),
        (404, "not_found", NotFoundError),
        (409, "not_failed", ConflictError),
        (413, "payload_too_large", BadRequestError),
        (415, "unsupported_media_type", BadRequestError),
        (422, "validation_failed", ValidationError),
        (429, "rate_limited", RateLimitError),
        (503, "unavailable", ServiceUnavailableError),
    ],
)
def test_each_status_maps_to_its_exception(status: int, code: str, cls: type[APIError]) -> None:
    script = Script(_error(status, code))
    with _sync(script, max_retries=0) as engine, pytest.raises(cls) as err:
        engine.me()
    assert err.value.code == code
    assert script.requests[0].headers["authorization"] == "Bearer tok"


def test_validation_error_fields() -> None:
    details = [{"field": "initial_data.base_url", "rule": "invalid_format", "message": "Invalid URL"}]
    with _sync(Script(_error(422, "validation_failed", details))) as engine, pytest.raises(ValidationError) as err:
        engine.workflows.start("t", {})
    assert [(f.field, f.rule) for f in err.value.fields] == [("initial_data.base_url", "invalid_format")]


def test_a_bad_request_names_its_fields_as_a_validation_error_does() -> None:
    details = [{"field": "cursor", "rule": "invalid_cursor", "message": "is not a cursor this endpoint issued"}]
    with _sync(Script(_error(400, "invalid_cursor", details))) as engine, pytest.raises(BadRequestError) as err:
        next(iter(engine.workflows.list()))
    assert [(f.field, f.rule) for f in err.value.fields] == [("cursor", "invalid_cursor")]


def test_an_error_without_field_details_has_no_fields() -> None:
    details = {"parent_workflow_id": "wf_p"}
    with _sync(Script(_error(409, "child_run", details))) as engine, pytest.raises(ConflictError) as err:
        engine.workflows.retry("wf_x")
    assert err.value.fields == []


def test_idempotent_call_retried_on_429_and_503_honouring_retry_after_sync() -> None:
    script = Script(
        _error(429, "rate_limited", retry_after="0"),
        _error(503, "unavailable", retry_after="0"),
        httpx.Response(200, json=ME),
    )
    with _sync(script) as engine:
        assert engine.me().organization_uuid == "org_x"
    assert len(script.requests) == 3


async def test_idempotent_call_retried_on_429_and_503_honouring_retry_after_async() -> None:
    script = Script(_error(429, "rate_limited", retry_after="0"), httpx.Response(200, json=ME))
    async with _async(script) as engine:
        assert (await engine.me()).organization_uuid == "org_x"
    assert len(script.requests) == 2


def test_retries_stop_at_max_retries() -> None:
    script = Script(*[_error(429, "rate_limited", retry_after="0") for _ in range(3)])
    with _sync(script, max_retries=2) as engine, pytest.raises(RateLimitError) as err:
        engine.me()
    assert len(script.requests) == 3
    assert err.value.retry_after == 0


def test_a_non_idempotent_call_is_not_retried() -> None:
    script = Script(_error(503, "unavailable", retry_after="0"), httpx.Response(200, json={}))
    with _sync(script) as engine, pytest.raises(ServiceUnavailableError):
        engine.workflows.retry("wf_1")
    assert len(script.requests) == 1


async def test_a_start_is_retried_only_with_an_idempotency_key() -> None:
    started = {"workflow_id": "wf_1", "state_name": "PENDING", "is_terminal": False}
    script = Script(_error(429, "rate_limited", retry_after="0"))
    async with _async(script) as engine:
        with pytest.raises(RateLimitError):
            await engine.workflows.start("t", {})
    script = Script(_error(429, "rate_limited", retry_after="0"), httpx.Response(201, json=started))
    async with _async(script) as engine:
        run = await engine.workflows.start("t", {}, idempotency_key="k1")
    assert run.workflow_id == "wf_1"
    assert [r.headers["idempotency-key"] for r in script.requests] == ["k1", "k1"]


def test_list_follows_next_cursor() -> None:
    run = {
        "workflow_type": "t",
        "version": "1.0",
        "organization_uuid": "org_x",
        "state_name": "PENDING",
        "is_terminal": False,
        "status": "RUNNING",
        "attempt": 1,
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
    }
    script = Script(
        httpx.Response(200, json={"runs": [{**run, "workflow_id": "wf_2"}], "next_cursor": "c1"}),
        httpx.Response(200, json={"runs": [{**run, "workflow_id": "wf_1"}], "next_cursor": None}),
    )
    with _sync(script) as engine:
        assert [r.workflow_id for r in engine.workflows.list(status="RUNNING", page_size=1)] == ["wf_2", "wf_1"]
    assert [dict(r.url.params) for r in script.requests] == [
        {"status": "RUNNING", "limit": "1"},
        {"status": "RUNNING", "limit": "1", "cursor": "c1"},
    ]


SCHEDULE = {
    "schedule_id": "sch_1",
    "workflow_type": "t",
    "initial_data": {"api_token": "[redacted]"},
    "cron": None,
    "interval_seconds": 60,
    "timezone": "UTC",
    "overlap": "skip",
    "paused": False,
    "created_at": "2026-01-01T00:00:00.000Z",
    "next_action_times": ["2026-01-01T00:01:00.000Z"],
    "recent_runs": [{"workflow_id": "wf_1", "started_at": "2026-01-01T00:00:00.000Z"}],
}


def test_schedule_and_cancel_requests_follow_the_contract_sync() -> None:
    script = Script(
        httpx.Response(201, json=SCHEDULE),
        httpx.Response(200, json={"schedules": [SCHEDULE]}),
        httpx.Response(200, json={**SCHEDULE, "paused": True}),
        httpx.Response(202, json={"schedule_id": "sch_1", "triggered": True}),
        httpx.Response(204),
        httpx.Response(202, json={"workflow_id": "wf_1", "cancel_requested": True}),
    )
    with _sync(script) as engine:
        created = engine.schedules.create("t", {"api_token": "s3cret"}, interval_seconds=60)
        assert created.recent_runs[0].workflow_id == "wf_1"
        assert [s.schedule_id for s in engine.schedules.list()] == ["sch_1"]
        assert engine.schedules.pause("sch_1").paused is True
        assert engine.schedules.trigger("sch_1").triggered is True
        engine.schedules.delete("sch_1")
        assert engine.workflows.cancel("wf_1").cancel_requested is True
    assert [(r.method, r.url.path) for r in script.requests] == [
        ("POST", "/api/schedules"),
        ("GET", "/api/schedules"),
        ("POST", "/api/schedules/sch_1/pause"),
        ("POST", "/api/schedules/sch_1/trigger"),
        ("DELETE", "/api/schedules/sch_1"),
        ("POST", "/api/workflows/wf_1/cancel"),
    ]
    # Options left out are not sent: the server applies its defaults (timezone UTC, overlap skip).
    assert json.loads(script.requests[0].content) == {
        "workflow_type": "t",
        "initial_data": {"api_token": "s3cret"},
        "interval_seconds": 60,
    }


async def test_schedule_and_cancel_requests_follow_the_contract_async() -> None:
    script = Script(
        httpx.Response(200, json={**SCHEDULE, "paused": False}),
        httpx.Response(202, json={"workflow_id": "wf_1", "cancel_requested": True}),
    )
    async with _async(script) as engine:
        assert (await engine.schedules.unpause("sch_1")).paused is False
        assert (await engine.workflows.handle("wf_1").cancel()).workflow_id == "wf_1"
    assert [r.url.path for r in script.requests] == ["/api/schedules/sch_1/unpause", "/api/workflows/wf_1/cancel"]


def test_an_id_cannot_reach_another_route() -> None:
    script = Script(_error(404, "not_found"))
    with _sync(script) as engine, pytest.raises(NotFoundError):
        engine.workflows.get("../schedules/sch_1")
    assert script.requests[0].url.raw_path == b"/api/workflows/..%2Fschedules%2Fsch_1"


Event = tuple[str, int, dict[str, Any]]


def _sse(*events: Event) -> httpx.Response:
    text = "".join(f"event: {name}\nid: {seq}\ndata: {json.dumps(data)}\n\n" for name, seq, data in events)
    return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


_T1: Event = ("transition", 1, {"seq": 1, "from": "PENDING", "to": "RUNNING", "action": "a", "at": "t"})
_T2: Event = ("transition", 2, {"seq": 2, "from": "RUNNING", "to": "COMPLETED", "action": "b", "at": "t"})
_DONE: Event = ("completed", 2, {"workflow_id": "wf_1", "state_name": "COMPLETED", "state_data": {"ok": True}})


def test_a_stream_closed_before_its_end_resumes_after_the_last_event_sync() -> None:
    script = Script(_sse(_T1), _sse(_T2, _DONE))
    with _sync(script) as engine:
        events = list(engine.workflows.stream("wf_1"))
    assert [e.event for e in events] == ["transition", "transition", "completed"]
    assert [r.headers.get("last-event-id") for r in script.requests] == [None, "1"]


async def test_a_stream_closed_before_its_end_resumes_after_the_last_event_async() -> None:
    # A server repeating an event it already sent is not passed on twice.
    script = Script(_sse(_T1), _sse(_T1, _T2, _DONE))
    async with _async(script) as engine:
        events = [e async for e in engine.workflows.stream("wf_1")]
    assert [e.event for e in events] == ["transition", "transition", "completed"]
    assert script.requests[1].headers["last-event-id"] == "1"


def test_a_stream_that_keeps_closing_gives_up_after_max_retries() -> None:
    script = Script(_sse(_T1), _sse(), _sse())
    with _sync(script, max_retries=1) as engine, pytest.raises(WorkflowEngineError, match="kept closing"):
        list(engine.workflows.stream("wf_1"))
    # The first connection made progress; one retry without any is all max_retries=1 allows.
    assert len(script.requests) == 2


def test_a_stream_cut_after_it_was_steady_does_not_use_up_the_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every connection here counts as having stayed open (a proxy cutting a long wait's stream).
    monkeypatch.setattr(calls, "STREAM_STEADY_SECONDS", 0.0)
    monkeypatch.setattr(calls, "backoff", lambda attempt, retry_after: 0.0)
    script = Script(_sse(_T1), _sse(), _sse(), _sse(), _sse(_T2, _DONE))
    with _sync(script, max_retries=1) as engine:
        assert [e.event for e in engine.workflows.stream("wf_1")] == ["transition", "transition", "completed"]
    assert len(script.requests) == 5


async def test_a_stream_cut_after_it_was_steady_does_not_use_up_the_retries_async(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(calls, "STREAM_STEADY_SECONDS", 0.0)
    monkeypatch.setattr(calls, "backoff", lambda attempt, retry_after: 0.0)
    script = Script(_sse(_T1), _sse(), _sse(), _sse(_T2, _DONE))
    async with _async(script, max_retries=1) as engine:
        assert [e.event async for e in engine.workflows.stream("wf_1")] == ["transition", "transition", "completed"]


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calls, "backoff", lambda attempt, retry_after: 0.0)


class Failing:
    """Raises one httpx transport error for every request, recording them."""

    def __init__(self, error: type[httpx.TransportError]):
        self.error = error
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        raise self.error("boom", request=request)


@pytest.mark.parametrize("error", [httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadTimeout])
def test_a_network_failure_is_an_api_connection_error_once_retries_run_out_sync(
    error: type[httpx.TransportError], no_backoff: None
) -> None:
    failing = Failing(error)
    with WorkflowEngine("http://engine", "tok", max_retries=2, transport=httpx.MockTransport(failing)) as engine:
        with pytest.raises(APIConnectionError) as err:
            engine.workflows.get("wf_1")
    assert len(failing.requests) == 3
    assert isinstance(err.value, WorkflowEngineError)
    assert isinstance(err.value.__cause__, error)
    assert str(err.value) == "could not reach the Workflow Engine API: boom"


async def test_a_network_failure_is_an_api_connection_error_once_retries_run_out_async(no_backoff: None) -> None:
    failing = Failing(httpx.ConnectError)
    transport = httpx.MockTransport(failing)
    async with AsyncWorkflowEngine("http://engine", "tok", max_retries=1, transport=transport) as engine:
        with pytest.raises(APIConnectionError) as err:
            await engine.workflows.get("wf_1")
    assert len(failing.requests) == 2
    assert isinstance(err.value.__cause__, httpx.ConnectError)


def test_a_non_idempotent_call_cut_by_the_network_raises_at_once() -> None:
    failing = Failing(httpx.RemoteProtocolError)
    with WorkflowEngine("http://engine", "tok", transport=httpx.MockTransport(failing)) as engine:
        with pytest.raises(APIConnectionError):
            engine.workflows.start("t", {})
    assert len(failing.requests) == 1


def test_an_unreachable_api_is_an_api_connection_error_and_a_builtin_connection_error() -> None:
    # A port nothing listens on: the real network transport, no mock.
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    with WorkflowEngine(f"http://127.0.0.1:{port}", "tok", max_retries=0) as engine:
        with pytest.raises(ConnectionError) as err:
            engine.me()
    assert isinstance(err.value, APIConnectionError)
    assert isinstance(err.value.__cause__, httpx.ConnectError)


def test_a_stream_cut_until_reconnects_run_out_is_an_api_connection_error_sync(no_backoff: None) -> None:
    failing = Failing(httpx.RemoteProtocolError)
    with WorkflowEngine("http://engine", "tok", max_retries=2, transport=httpx.MockTransport(failing)) as engine:
        with pytest.raises(APIConnectionError) as err:
            list(engine.workflows.stream("wf_1"))
    assert len(failing.requests) == 3
    assert isinstance(err.value.__cause__, httpx.RemoteProtocolError)


async def test_a_stream_cut_until_reconnects_run_out_is_an_api_connection_error_async(no_backoff: None) -> None:
    failing = Failing(httpx.ReadTimeout)
    transport = httpx.MockTransport(failing)
    async with AsyncWorkflowEngine("http://engine", "tok", max_retries=1, transport=transport) as engine:
        with pytest.raises(APIConnectionError):
            [e async for e in engine.workflows.handle("wf_1").events()]
    assert len(failing.requests) == 2


async def test_an_empty_idempotency_key_is_refused_before_any_request() -> None:
    # Sent as no key, it would leave a start the caller believes safe to repeat unprotected.
    script = Script()
    with _sync(script) as engine, pytest.raises(ValueError, match="idempotency_key"):
        engine.workflows.start("t", {}, idempotency_key="")
    async with _async(script) as aengine:
        with pytest.raises(ValueError, match="idempotency_key"):
            await aengine.workflows.start("t", {}, idempotency_key="")
    assert script.requests == []


_STARTED = {"workflow_id": "wf_1", "state_name": "PENDING", "is_terminal": False}


def test_a_replayed_start_says_so_sync() -> None:
    script = Script(
        httpx.Response(201, json=_STARTED),
        httpx.Response(201, json=_STARTED, headers={"Idempotent-Replayed": "true"}),
        httpx.Response(201, json={**_STARTED, "state_name": "RUNNING"}),
    )
    with _sync(script) as engine:
        first = engine.workflows.start("t", {}, idempotency_key="k1")
        second = engine.workflows.start("t", {}, idempotency_key="k1")
        assert (first.replayed, second.replayed) == (False, True)
        assert second.started is not None and second.started.replayed is True
        # A retry answers its own StartResult; the handle still says how its run was started.
        second.retry()
        assert (second.replayed, second.started.replayed) == (True, False)


async def test_a_replayed_start_says_so_async() -> None:
    script = Script(httpx.Response(201, json=_STARTED, headers={"Idempotent-Replayed": "true"}))
    async with _async(script) as engine:
        run = await engine.workflows.start("t", {}, idempotency_key="k1")
    assert run.replayed is True


_CREATED = {
    "connection_uuid": "9b2f7c1e-0000-4000-8000-000000000001",
    "plugin": "esign",
    "name": "n",
    "created_at": "2026-01-01T00:00:00.000Z",
}


async def test_connections_create_answers_the_created_shape() -> None:
    script = Script(httpx.Response(201, json=_CREATED), httpx.Response(201, json=_CREATED))
    with _sync(script) as engine:
        created = engine.connections.create("esign", "n", {"api_token": "t"}, {"base_url": "https://e"})
    async with _async(script) as aengine:
        acreated = await aengine.connections.create("esign", "n", {"api_token": "t"})
    # Not a Connection with an empty config and no updated_at the API never said.
    assert isinstance(created, ConnectionCreated) and isinstance(acreated, ConnectionCreated)
    assert created.model_dump() == acreated.model_dump() == _CREATED


@pytest.mark.parametrize("base_url", ["http://engine/api", "http://engine/api/", "http://engine/", "http://engine"])
async def test_a_base_url_with_or_without_api(base_url: str) -> None:
    script = Script(httpx.Response(200, json=ME), httpx.Response(200, json=ME))
    with WorkflowEngine(base_url, "tok", transport=httpx.MockTransport(script)) as engine:
        engine.me()
    async with AsyncWorkflowEngine(base_url, "tok", transport=httpx.MockTransport(script)) as aengine:
        await aengine.me()
    assert [str(r.url) for r in script.requests] == ["http://engine/api/auth/me"] * 2
