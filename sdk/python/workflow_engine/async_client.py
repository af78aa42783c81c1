"""The asynchronous client: the same methods as WorkflowEngine, as coroutines."""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx
from httpx_sse import aconnect_sse

from . import _calls as c
from . import models as m
from ._paging import awalk
from .errors import APIError, WaitTimeoutError, WorkflowEngineError, connection_error, error_for

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
# A stream is silent between transitions except for the server's keep-alive comments.
STREAM_READ_TIMEOUT = 90.0


class _AsyncTransport:
    def __init__(
        self, base_url: str, token: str, timeout: float, max_retries: int, transport: httpx.AsyncBaseTransport | None
    ):
        self.max_retries = max_retries
        self.timeout = timeout
        self.http = httpx.AsyncClient(
            base_url=c.origin(base_url),
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )

    async def call(self, call: c.Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = await self.http.request(
                    call.method, call.path, params=call.params, json=call.body, headers=call.headers
                )
            except httpx.TransportError as err:
                if not call.idempotent or attempt >= self.max_retries:
                    raise connection_error(err) from err
                await asyncio.sleep(c.backoff(attempt, None))
                attempt += 1
                continue
            if response.is_success:
                return call.parse(response.json() if response.content else None, response.headers)
            error = error_for(response)
            if not self._retryable(call.idempotent, error, attempt):
                raise error
            await asyncio.sleep(c.backoff(attempt, error.retry_after))
            attempt += 1

    def _retryable(self, idempotent: bool, error: APIError, attempt: int) -> bool:
        return idempotent and error.status in (429, 503) and attempt < self.max_retries

    async def events(self, workflow_id: str) -> AsyncIterator[m.RunEvent]:
        last_id: str | None = None
        last_seq = 0
        attempt = 0
        timeout = httpx.Timeout(self.timeout, read=STREAM_READ_TIMEOUT)
        while True:
            headers = {"Accept": "text/event-stream"}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            opened: float | None = None
            try:
                async with aconnect_sse(
                    self.http, "GET", c.stream_path(workflow_id), headers=headers, timeout=timeout
                ) as source:
                    if not source.response.is_success:
                        await source.response.aread()
                        error = error_for(source.response)
                        if not self._retryable(True, error, attempt):
                            raise error
                        await asyncio.sleep(c.backoff(attempt, error.retry_after))
                        attempt += 1
                        continue
                    opened = time.monotonic()
                    async for sse in source.aiter_sse():
                        event = c.parse_event(sse)
                        if event is None:
                            continue
                        attempt = 0
                        if sse.id:
                            last_id = sse.id
                        if isinstance(event, m.TransitionEvent):
                            # Resuming from Last-Event-ID never repeats one; this guards a server that would.
                            if event.seq <= last_seq:
                                continue
                            last_seq = event.seq
                        yield event
                        if not isinstance(event, m.TransitionEvent):
                            return
            except httpx.TransportError as err:
                if c.was_steady(opened):
                    attempt = 0
                elif attempt >= self.max_retries:
                    raise connection_error(err) from err
            else:
                # Closed before its end event (an API restart): resumed like a dropped connection.
                if c.was_steady(opened):
                    attempt = 0
                elif attempt >= self.max_retries:
                    raise WorkflowEngineError(f"the stream of {workflow_id} kept closing before the run ended")
            await asyncio.sleep(c.backoff(attempt, None))
            attempt += 1


class AsyncRunHandle:
    """A run: read it, follow its events, wait for its end, retry or cancel it."""

    def __init__(self, transport: _AsyncTransport, workflow_id: str, started: m.StartResult | None = None):
        self._t = transport
        self.workflow_id = workflow_id
        self.started = started
        # True when the start returned the run an earlier start with the same idempotency key created;
        # kept through retry(), which replaces `started`.
        self.replayed = started is not None and started.replayed

    def __repr__(self) -> str:
        return f"AsyncRunHandle({self.workflow_id!r})"

    async def get(self) -> m.Run:
        """The run as it is now."""
        return await self._t.call(c.get_run(self.workflow_id))

    async def history(self) -> m.History:
        """Every transition so far."""
        return await self._t.call(c.history(self.workflow_id))

    def events(self) -> AsyncIterator[m.RunEvent]:
        """Transitions, then the `completed` or `failed` event; a dropped connection resumes where it stopped."""
        return self._t.events(self.workflow_id)

    async def wait(self, timeout: float | None = None, poll_interval: float = 0.25) -> dict[str, Any]:
        """The terminal state_data; raises WorkflowFailedError if the run failed, WaitTimeoutError past `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = poll_interval
        while True:
            run = await self.get()
            if run.is_terminal:
                return c.outcome(run)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(f"run {self.workflow_id} still {run.state_name} after {timeout} s")
            pause = interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic()))
            await asyncio.sleep(pause)
            interval = min(interval * 2, 2.0)

    async def retry(self) -> AsyncRunHandle:
        """Re-drive a FAILED or CANCELLED run from its last good state (same id)."""
        self.started = await self._t.call(c.retry(self.workflow_id))
        return self

    async def cancel(self) -> m.CancelResult:
        """Ask the run to stop; it ends CANCELLED."""
        return await self._t.call(c.cancel(self.workflow_id))


class AsyncCatalog:
    """The workflow types and their schemas."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def list_types(self, prefix: str | None = None) -> m.TypeList:
        """The types (and namespaces) whose name starts with `prefix`."""
        return await self._t.call(c.list_types(prefix))

    async def get_definition(self, workflow_type: str) -> m.Definition:
        """A type's states and transitions."""
        return await self._t.call(c.get_definition(workflow_type))

    async def get_schema(self, workflow_type: str) -> m.TypeSchema:
        """A type's input and output JSON Schemas."""
        return await self._t.call(c.get_schema(workflow_type))

    async def get_prerequisites(self, workflow_type: str) -> m.Prerequisites:
        """What must be set up before the type can run."""
        return await self._t.call(c.get_prerequisites(workflow_type))


class AsyncWorkflows:
    """Runs: start, read, list, follow, retry, cancel."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    def handle(self, workflow_id: str) -> AsyncRunHandle:
        """A handle on an existing run (no request is made)."""
        return AsyncRunHandle(self._t, workflow_id)

    async def start(
        self, workflow_type: str, initial_data: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> AsyncRunHandle:
        """Start a run; with `idempotency_key`, a repeated call returns the same run."""
        started = await self._t.call(c.start(workflow_type, initial_data, idempotency_key))
        return AsyncRunHandle(self._t, started.workflow_id, started)

    async def get(self, workflow_id: str) -> m.Run:
        """A run."""
        return await self._t.call(c.get_run(workflow_id))

    def list(
        self,
        *,
        workflow_type: str | None = None,
        status: m.RunStatus | None = None,
        state_name: str | None = None,
        schedule_id: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[m.Run]:
        """Every run matching the filters, newest first, fetching page after page as it is iterated."""
        filters = {
            "workflow_type": workflow_type,
            "status": status,
            "state_name": state_name,
            "schedule_id": schedule_id,
            "limit": page_size,
        }
        return awalk(lambda cursor: self._t.call(c.list_runs(filters, cursor)), lambda page: page.runs)

    async def history(self, workflow_id: str) -> m.History:
        """Every transition of a run, in order."""
        return await self._t.call(c.history(workflow_id))

    def stream(self, workflow_id: str) -> AsyncIterator[m.RunEvent]:
        """The run's events (see AsyncRunHandle.events)."""
        return self._t.events(workflow_id)

    async def retry(self, workflow_id: str) -> AsyncRunHandle:
        """Re-drive a FAILED or CANCELLED run."""
        return await AsyncRunHandle(self._t, workflow_id).retry()

    async def cancel(self, workflow_id: str) -> m.CancelResult:
        """Ask a run to stop."""
        return await self._t.call(c.cancel(workflow_id))


class AsyncPlugins:
    """Provider families and their credential fields."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def list(self) -> builtins.list[m.Plugin]:
        """Every plugin."""
        return await self._t.call(c.list_plugins())


class AsyncConnections:
    """Stored credentials of the organization (secrets are write-only)."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def create(
        self, plugin: str, name: str, secrets: Mapping[str, Any], config: Mapping[str, Any] | None = None
    ) -> m.ConnectionCreated:
        """Store a credential for one plugin; the answer holds no config (``get`` returns it)."""
        return await self._t.call(c.create_connection(plugin, name, secrets, config))

    async def list(self, plugin: str | None = None) -> builtins.list[m.Connection]:
        """The organization's connections, optionally of one plugin."""
        return await self._t.call(c.list_connections(plugin))

    async def get(self, connection_uuid: str) -> m.Connection:
        """A connection."""
        return await self._t.call(c.get_connection(connection_uuid))

    async def update(
        self,
        connection_uuid: str,
        *,
        name: str | None = None,
        secrets: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> m.Connection:
        """Rename, reconfigure or rotate secrets."""
        return await self._t.call(
            c.update_connection(connection_uuid, {"name": name, "secrets": secrets, "config": config})
        )

    async def delete(self, connection_uuid: str) -> None:
        """Delete a connection."""
        await self._t.call(c.delete_connection(connection_uuid))


class AsyncSchedules:
    """Runs started on a cron expression or an interval."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def create(
        self,
        workflow_type: str,
        initial_data: Mapping[str, Any],
        *,
        cron: str | None = None,
        interval_seconds: int | None = None,
        timezone: str | None = None,
        overlap: m.Overlap | None = None,
        paused: bool | None = None,
    ) -> m.Schedule:
        """Create a schedule; give exactly one of `cron` and `interval_seconds`."""
        options = {
            "cron": cron,
            "interval_seconds": interval_seconds,
            "timezone": timezone,
            "overlap": overlap,
            "paused": paused,
        }
        return await self._t.call(c.create_schedule(workflow_type, initial_data, options))

    async def list(self) -> builtins.list[m.Schedule]:
        """The organization's schedules, newest first."""
        return await self._t.call(c.list_schedules())

    async def get(self, schedule_id: str) -> m.Schedule:
        """A schedule."""
        return await self._t.call(c.get_schedule(schedule_id))

    async def delete(self, schedule_id: str) -> None:
        """Delete a schedule."""
        await self._t.call(c.delete_schedule(schedule_id))

    async def pause(self, schedule_id: str) -> m.Schedule:
        """Stop starting runs until unpaused."""
        return await self._t.call(c.pause_schedule(schedule_id, True))

    async def unpause(self, schedule_id: str) -> m.Schedule:
        """Start runs again."""
        return await self._t.call(c.pause_schedule(schedule_id, False))

    async def trigger(self, schedule_id: str) -> m.TriggerResult:
        """Start a run now."""
        return await self._t.call(c.trigger_schedule(schedule_id))


class AsyncHooks:
    """Webhook redirect endpoints and the events they received."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def create_endpoint(
        self, name: str, target_url: str, *, secret_ref: str | None = None
    ) -> m.HookEndpointCreated:
        """Create an endpoint; its generated ``signing_secret`` is shown once, in this answer."""
        return await self._t.call(c.create_hook_endpoint(name, target_url, secret_ref))

    async def list_endpoints(self) -> builtins.list[m.HookEndpoint]:
        """The organization's endpoints (never their secrets)."""
        return await self._t.call(c.list_hook_endpoints())

    async def get_endpoint(self, endpoint_uuid: str) -> m.HookEndpoint:
        """An endpoint."""
        return await self._t.call(c.get_hook_endpoint(endpoint_uuid))

    async def delete_endpoint(self, endpoint_uuid: str) -> None:
        """Delete an endpoint and its events."""
        await self._t.call(c.delete_hook_endpoint(endpoint_uuid))

    async def rotate_secret(self, endpoint_uuid: str) -> m.HookSecretRotated:
        """Replace the signing secret; the new one is shown once, in this answer."""
        return await self._t.call(c.rotate_hook_secret(endpoint_uuid))

    async def list_events(self, endpoint_uuid: str, *, limit: int | None = None) -> builtins.list[m.HookEvent]:
        """An endpoint's events, newest first (`limit` 1-500, default 100)."""
        return await self._t.call(c.list_hook_events(endpoint_uuid, limit))

    async def get_event(self, event_uuid: str) -> m.HookEvent:
        """An event with its delivery attempts."""
        return await self._t.call(c.get_hook_event(event_uuid))

    async def replay_event(self, event_uuid: str) -> m.HookEventReplayed:
        """Deliver the event again, signed, through a hook.replay-event run (ConflictError once it has expired)."""
        return await self._t.call(c.replay_hook_event(event_uuid))

    async def acknowledge_event(self, event_uuid: str) -> m.HookEvent:
        """Mark a delivered event acknowledged (ConflictError while it is pending or once it has expired)."""
        return await self._t.call(c.acknowledge_hook_event(event_uuid))


class AsyncCompositions:
    """Built-in types composed into a type of the organization, ``virtual.<uuid>@<version>``."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def create(
        self, name: str, steps: Sequence[Mapping[str, Any]], *, exposed_to_end_users: bool | None = None
    ) -> m.CompositionCreated:
        """Compose the steps into version 1 (a ValidationError names each step and field that is wrong)."""
        return await self._t.call(c.create_composition(name, steps, exposed_to_end_users))

    async def list(self) -> builtins.list[m.Composition]:
        """The latest version of each composition, newest first."""
        return await self._t.call(c.list_compositions())

    async def get(self, composition_uuid: str) -> m.CompositionDetail:
        """A composition's latest version and every version."""
        return await self._t.call(c.get_composition(composition_uuid))

    async def update(
        self,
        composition_uuid: str,
        name: str,
        steps: Sequence[Mapping[str, Any]],
        *,
        exposed_to_end_users: bool | None = None,
    ) -> m.CompositionCreated:
        """Create the next version; earlier versions stay startable."""
        return await self._t.call(c.update_composition(composition_uuid, name, steps, exposed_to_end_users))


class AsyncEntitlements:
    """What the organization's payments chains granted."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def page(
        self, *, subject: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> m.EntitlementPage:
        """One page, newest first; pass its ``next_cursor`` as `cursor` for the next."""
        return await self._t.call(c.list_entitlements(subject, limit, cursor))

    def list(self, *, subject: str | None = None, page_size: int | None = None) -> AsyncIterator[m.Entitlement]:
        """Every entitlement (of `subject`), newest first, fetching page after page as it is iterated."""
        return awalk(
            lambda cursor: self.page(subject=subject, limit=page_size, cursor=cursor), lambda page: page.entitlements
        )


class AsyncApps:
    """End-user sign-in apps (provisioned by identity.app.provision runs)."""

    def __init__(self, transport: _AsyncTransport):
        self._t = transport

    async def list(self) -> builtins.list[m.App]:
        """The organization's apps."""
        return await self._t.call(c.list_apps())

    async def clear_end_user_totp(self, client_uuid: str, end_user_uuid: str) -> None:
        """Turn TOTP off for an end user of one of the organization's apps.

        The end user then signs in with the password alone: the way back from a lost phone or a
        secret someone else enrolled. NotFoundError for an app or end user the organization does
        not have.
        """
        await self._t.call(c.clear_end_user_totp(client_uuid, end_user_uuid))


class AsyncWorkflowEngine:
    """Asynchronous client of the Workflow Engine Service (use ``async with``).

    `base_url` is the service's root (``http://127.0.0.1:3000``; a trailing ``/api`` is accepted);
    idempotent calls are retried up to `max_retries` times on 429 and 503, after the server's
    Retry-After. `transport` replaces httpx's network transport (a proxy, a mock in tests).
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self._t = _AsyncTransport(base_url, token, timeout, max_retries, transport)
        self.catalog = AsyncCatalog(self._t)
        self.workflows = AsyncWorkflows(self._t)
        self.plugins = AsyncPlugins(self._t)
        self.connections = AsyncConnections(self._t)
        self.schedules = AsyncSchedules(self._t)
        self.hooks = AsyncHooks(self._t)
        self.compositions = AsyncCompositions(self._t)
        self.entitlements = AsyncEntitlements(self._t)
        self.apps = AsyncApps(self._t)

    async def me(self) -> m.Me:
        """Who the token is."""
        return await self._t.call(c.me())

    async def health(self) -> m.Health:
        """The health of the API, Temporal and the database (a 503 raises ServiceUnavailableError)."""
        return await self._t.call(c.health())

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._t.http.aclose()

    async def __aenter__(self) -> AsyncWorkflowEngine:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
