"""What each API operation sends and how its answer is read, shared by the sync and async clients."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from httpx_sse import ServerSentEvent
from pydantic import TypeAdapter

from . import models as m
from .errors import WorkflowFailedError

T = TypeVar("T")

# The state_data fields a failed run carries (the stream's `failed` event repeats them under `error`).
FAILURE_FIELDS = (
    "failure_reason",
    "failure_type",
    "failed_step",
    "failed_layer",
    "failed_at_state",
    "error",
    "error_type",
    "failed_at",
    "failed_action",
)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the parser of its answer (its JSON body and its headers)."""

    method: str
    path: str
    parse: Callable[[Any, Mapping[str, str]], T]
    params: Mapping[str, str] | None = None
    # Kept out of repr: a body may carry secrets (connection secrets, api_token) into a traceback.
    body: Any = field(default=None, repr=False)
    headers: Mapping[str, str] | None = None
    # Only a call that may be repeated without effect is retried on 429/503 or a dropped connection.
    idempotent: bool = True


# A stream connection open this long before it closed was working (the server sends keep-alives
# every 15 s): a proxy cutting streams that look idle during a long wait does not use up the
# reconnects; only connections that break early count toward max_retries.
STREAM_STEADY_SECONDS = 10.0


def was_steady(opened: float | None) -> bool:
    """Whether a stream connection opened at `opened` (time.monotonic) stayed open long enough to count as working."""
    return opened is not None and time.monotonic() - opened >= STREAM_STEADY_SECONDS


def seg(value: str) -> str:
    """A path segment, escaped so an id can never reach another route."""
    return quote(value, safe="")


def _validator(cls: type[T]) -> Callable[[Any], T]:
    adapter: TypeAdapter[T] = TypeAdapter(cls)
    return adapter.validate_python


def _model(cls: type[T]) -> Callable[[Any, Mapping[str, str]], T]:
    validate = _validator(cls)
    return lambda body, _headers: validate(body)


def _listed(cls: type[T], key: str) -> Callable[[Any, Mapping[str, str]], list[T]]:
    """The parser of a list the API answers under `key` (``{"schedules": [...]}``)."""
    validate = _validator(cls)
    return lambda body, _headers: [validate(item) for item in body[key]]


def _nothing(_body: Any, _headers: Mapping[str, str]) -> None:
    return None


def _started(body: Any, headers: Mapping[str, str]) -> m.StartResult:
    # The body of a replayed start is the earlier run's: only this header tells it from a new one.
    return m.StartResult.model_validate({**body, "replayed": headers.get("idempotent-replayed") == "true"})


def origin(base_url: str) -> str:
    """The service's root, from a base URL given with or without its trailing ``/api`` (every path adds it)."""
    return base_url.rstrip("/").removesuffix("/api")


def me() -> Call[m.Me]:
    return Call("GET", "/api/auth/me", _model(m.Me))


def health() -> Call[m.Health]:
    return Call("GET", "/api/health", _model(m.Health))


def list_types(prefix: str | None) -> Call[m.TypeList]:
    return Call("GET", "/api/workflows/types", _model(m.TypeList), params={"prefix": prefix} if prefix else None)


def get_definition(workflow_type: str) -> Call[m.Definition]:
    return Call("GET", f"/api/workflows/types/{seg(workflow_type)}", _model(m.Definition))


def get_schema(workflow_type: str) -> Call[m.TypeSchema]:
    return Call("GET", f"/api/workflows/types/{seg(workflow_type)}/schema", _model(m.TypeSchema))


def get_prerequisites(workflow_type: str) -> Call[m.Prerequisites]:
    return Call("GET", f"/api/workflows/types/{seg(workflow_type)}/prerequisites", _model(m.Prerequisites))


def start(workflow_type: str, initial_data: Mapping[str, Any], idempotency_key: str | None) -> Call[m.StartResult]:
    if idempotency_key == "":
        # The API (and MCP) refuse an empty key; dropping it instead would leave the caller believing
        # that repeating this start is safe.
        raise ValueError("idempotency_key is empty: pass 1-255 printable ASCII characters, or None for no key")
    return Call(
        "POST",
        "/api/workflows/start",
        _started,
        body={"workflow_type": workflow_type, "initial_data": dict(initial_data)},
        headers={"Idempotency-Key": idempotency_key} if idempotency_key is not None else None,
        # The server replays a start with the same key instead of starting a second run.
        idempotent=idempotency_key is not None,
    )


def get_run(workflow_id: str) -> Call[m.Run]:
    return Call("GET", f"/api/workflows/{seg(workflow_id)}", _model(m.Run))


def list_runs(filters: Mapping[str, str | int | None], cursor: str | None) -> Call[m.RunPage]:
    params = {k: str(v) for k, v in filters.items() if v is not None}
    if cursor:
        params["cursor"] = cursor
    return Call("GET", "/api/workflows", _model(m.RunPage), params=params)


def history(workflow_id: str) -> Call[m.History]:
    return Call("GET", f"/api/workflows/{seg(workflow_id)}/history", _model(m.History))


def retry(workflow_id: str) -> Call[m.StartResult]:
    return Call("POST", f"/api/workflows/{seg(workflow_id)}/retry", _model(m.StartResult), idempotent=False)


def cancel(workflow_id: str) -> Call[m.CancelResult]:
    return Call("POST", f"/api/workflows/{seg(workflow_id)}/cancel", _model(m.CancelResult), idempotent=False)


def list_plugins() -> Call[list[m.Plugin]]:
    return Call("GET", "/api/plugins", _listed(m.Plugin, "plugins"))


def list_connections(plugin: str | None) -> Call[list[m.Connection]]:
    return Call(
        "GET",
        "/api/connections",
        _listed(m.Connection, "connections"),
        params={"plugin": plugin} if plugin else None,
    )


def create_connection(
    plugin: str, name: str, secrets: Mapping[str, Any], config: Mapping[str, Any] | None
) -> Call[m.ConnectionCreated]:
    body: dict[str, Any] = {"plugin": plugin, "name": name, "secrets": dict(secrets)}
    if config is not None:
        body["config"] = dict(config)
    return Call("POST", "/api/connections", _model(m.ConnectionCreated), body=body, idempotent=False)


def get_connection(connection_uuid: str) -> Call[m.Connection]:
    return Call("GET", f"/api/connections/{seg(connection_uuid)}", _model(m.Connection))


def update_connection(connection_uuid: str, changes: Mapping[str, Any]) -> Call[m.Connection]:
    body = {k: v for k, v in changes.items() if v is not None}
    return Call("PATCH", f"/api/connections/{seg(connection_uuid)}", _model(m.Connection), body=body)


def delete_connection(connection_uuid: str) -> Call[None]:
    return Call("DELETE", f"/api/connections/{seg(connection_uuid)}", _nothing)


def create_schedule(
    workflow_type: str, initial_data: Mapping[str, Any], options: Mapping[str, Any]
) -> Call[m.Schedule]:
    body = {"workflow_type": workflow_type, "initial_data": dict(initial_data)}
    body.update({k: v for k, v in options.items() if v is not None})
    return Call("POST", "/api/schedules", _model(m.Schedule), body=body, idempotent=False)


def list_schedules() -> Call[list[m.Schedule]]:
    return Call("GET", "/api/schedules", _listed(m.Schedule, "schedules"))


def get_schedule(schedule_id: str) -> Call[m.Schedule]:
    return Call("GET", f"/api/schedules/{seg(schedule_id)}", _model(m.Schedule))


def delete_schedule(schedule_id: str) -> Call[None]:
    return Call("DELETE", f"/api/schedules/{seg(schedule_id)}", _nothing)


def pause_schedule(schedule_id: str, paused: bool) -> Call[m.Schedule]:
    action = "pause" if paused else "unpause"
    return Call("POST", f"/api/schedules/{seg(schedule_id)}/{action}", _model(m.Schedule))


def trigger_schedule(schedule_id: str) -> Call[m.TriggerResult]:
    return Call("POST", f"/api/schedules/{seg(schedule_id)}/trigger", _model(m.TriggerResult), idempotent=False)


def create_hook_endpoint(name: str, target_url: str, secret_ref: str | None) -> Call[m.HookEndpointCreated]:
    body = {"name": name, "target_url": target_url}
    if secret_ref is not None:
        body["secret_ref"] = secret_ref
    return Call("POST", "/api/hooks/endpoints", _model(m.HookEndpointCreated), body=body, idempotent=False)


def list_hook_endpoints() -> Call[list[m.HookEndpoint]]:
    return Call("GET", "/api/hooks/endpoints", _listed(m.HookEndpoint, "endpoints"))


def get_hook_endpoint(endpoint_uuid: str) -> Call[m.HookEndpoint]:
    return Call("GET", f"/api/hooks/endpoints/{seg(endpoint_uuid)}", _model(m.HookEndpoint))


def delete_hook_endpoint(endpoint_uuid: str) -> Call[None]:
    return Call("DELETE", f"/api/hooks/endpoints/{seg(endpoint_uuid)}", _nothing)


def rotate_hook_secret(endpoint_uuid: str) -> Call[m.HookSecretRotated]:
    path = f"/api/hooks/endpoints/{seg(endpoint_uuid)}/rotate-secret"
    return Call("POST", path, _model(m.HookSecretRotated), idempotent=False)


def list_hook_events(endpoint_uuid: str, limit: int | None) -> Call[list[m.HookEvent]]:
    return Call(
        "GET",
        f"/api/hooks/endpoints/{seg(endpoint_uuid)}/events",
        _listed(m.HookEvent, "events"),
        params={"limit": str(limit)} if limit is not None else None,
    )


def get_hook_event(event_uuid: str) -> Call[m.HookEvent]:
    return Call("GET", f"/api/hooks/events/{seg(event_uuid)}", _model(m.HookEvent))


def replay_hook_event(event_uuid: str) -> Call[m.HookEventReplayed]:
    path = f"/api/hooks/events/{seg(event_uuid)}/replay"
    return Call("POST", path, _model(m.HookEventReplayed), idempotent=False)


def acknowledge_hook_event(event_uuid: str) -> Call[m.HookEvent]:
    # Safe to repeat: acknowledging again keeps the first acknowledged_at.
    return Call("POST", f"/api/hooks/events/{seg(event_uuid)}/acknowledge", _model(m.HookEvent))


def _composition_body(name: str, steps: Sequence[Mapping[str, Any]], exposed: bool | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "steps": [dict(step) for step in steps]}
    if exposed is not None:
        body["exposed_to_end_users"] = exposed
    return body


def create_composition(
    name: str, steps: Sequence[Mapping[str, Any]], exposed: bool | None
) -> Call[m.CompositionCreated]:
    body = _composition_body(name, steps, exposed)
    return Call("POST", "/api/compositions", _model(m.CompositionCreated), body=body, idempotent=False)


def list_compositions() -> Call[list[m.Composition]]:
    return Call("GET", "/api/compositions", _listed(m.Composition, "compositions"))


def get_composition(composition_uuid: str) -> Call[m.CompositionDetail]:
    return Call("GET", f"/api/compositions/{seg(composition_uuid)}", _model(m.CompositionDetail))


def update_composition(
    composition_uuid: str, name: str, steps: Sequence[Mapping[str, Any]], exposed: bool | None
) -> Call[m.CompositionCreated]:
    body = _composition_body(name, steps, exposed)
    # Each PUT creates the next version: repeating it would create another.
    path = f"/api/compositions/{seg(composition_uuid)}"
    return Call("PUT", path, _model(m.CompositionCreated), body=body, idempotent=False)


def list_entitlements(subject: str | None, limit: int | None, cursor: str | None) -> Call[m.EntitlementPage]:
    params = {k: str(v) for k, v in {"subject": subject, "limit": limit, "cursor": cursor}.items() if v is not None}
    return Call("GET", "/api/entitlements", _model(m.EntitlementPage), params=params)


def list_apps() -> Call[list[m.App]]:
    return Call("GET", "/api/apps", _listed(m.App, "apps"))


def clear_end_user_totp(client_uuid: str, end_user_uuid: str) -> Call[None]:
    return Call("DELETE", f"/api/apps/{seg(client_uuid)}/end-users/{seg(end_user_uuid)}/mfa/totp", _nothing)


def stream_path(workflow_id: str) -> str:
    """The run's Server-Sent Events route."""
    return f"/api/workflows/{seg(workflow_id)}/stream"


_EVENTS: dict[str, Callable[[Any], m.RunEvent]] = {
    "transition": _validator(m.TransitionEvent),
    "completed": _validator(m.CompletedEvent),
    "failed": _validator(m.FailedEvent),
}


def parse_event(sse: ServerSentEvent) -> m.RunEvent | None:
    """A typed event, or None for an event type this client does not know."""
    parse = _EVENTS.get(sse.event)
    return parse(json.loads(sse.data)) if parse else None


def outcome(run: m.Run) -> dict[str, Any]:
    """The state_data of a terminal run, or the WorkflowFailedError of a run that did not succeed."""
    data = run.state_data or {}
    if run.status == "COMPLETED":
        return data
    fields = {k: data[k] for k in FAILURE_FIELDS if k in data}
    default = "run cancelled" if run.status == "CANCELLED" else "run failed"
    raise WorkflowFailedError(run.workflow_id, str(data.get("failure_reason", default)), fields, data)


def backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds before the next attempt: the server's Retry-After, else exponential from 0.5 s up to 8 s."""
    if retry_after is not None:
        return retry_after
    return float(min(8.0, 0.5 * 2**attempt))
