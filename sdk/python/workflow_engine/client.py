"""The synchronous client."""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import httpx
from httpx_sse import connect_sse

from . import _calls as c
from . import models as m
from ._paging import walk
from .errors import APIError, WaitTimeoutError, WorkflowEngineError, connection_error, error_for

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
# A stream is silent between transitions except for the server's keep-alive comments.
STREAM_READ_TIMEOUT = 90.0


class _Transport:
    def __init__(
        self, base_url: str, token: str, timeout: float, max_retries: int, transport: httpx.BaseTransport | None
    ):
        self.max_retries = max_retries
        self.timeout = timeout
        self.http = httpx.Client(
            base_url=c.origin(base_url),
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )

    def call(self, call: c.Call[T]) -> T:
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    call.method, call.path, params=call.params, json=call.body, headers=call.headers
                )
            except httpx.TransportError as err:
                if not call.idempotent or attempt >= self.max_retries:
                    raise connection_error(err) from err
                time.sleep(c.backoff(attempt, None))
                attempt += 1
                continue
            if response.is_success:
                return call.parse(response.json() if response.content else None, response.headers)
            error = error_for(response)
            if not self._retryable(call.idempotent, error, attempt):
                raise error
            time.sleep(c.backoff(attempt, error.retry_after))
            attempt += 1

    def _retryable(self, idempotent: bool, error: APIError, attempt: int) -> bool:
        return idempotent and error.status in (429, 503) and attempt < self.max_retries

    def events(self, workflow_id: str) -> Iterator[m.RunEvent]:
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
                with connect_sse(
                    self.http, "GET", c.stream_path(workflow_id), headers=headers, timeout=timeout
                ) as source:
                    if not source.response.is_success:
                        source.response.read()
                        error = error_for(source.response)
                        if not self._retryable(True, error, attempt):
                            raise error
                        time.sleep(c.backoff(attempt, error.retry_after))
                        attempt += 1
                        continue
                    opened = time.monotonic()
                    for sse in source.iter_sse():
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
            time.sleep(c.backoff(attempt, None))
            attempt += 1


class RunHandle:
    """A run: read it, follow its events, wait for its end, retry or cancel it."""

    def __init__(self, transport: _Transport, workflow_id: str, started: m.StartResult | None = None):
        self._t = transport
        self.workflow_id = workflow_id
        self.started = started
        # True when the start returned the run an earlier start with the same idempotency key created;
        # kept through retry(), which replaces `started`.
        self.replayed = started is not None and started.replayed

    def __repr__(self) -> str:
        return f"RunHandle({self.workflow_id!r})"

    def get(self) -> m.Run:
        """The run as it is now."""
        return self._t.call(c.get_run(self.workflow_id))

    def history(self) -> m.History:
        """Every transition so far."""
        return self._t.call(c.history(self.workflow_id))

    def events(self) -> Iterator[m.RunEvent]:
        """Transitions, then the `completed` or `failed` event; a dropped connection resumes where it stopped."""
        return self._t.events(self.workflow_id)

    def wait(self, timeout: float | None = None, poll_interval: float = 0.25) -> dict[str, Any]:
        """The terminal state_data; raises WorkflowFailedError if the run failed, WaitTimeoutError past `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        interval = poll_interval
        while True:
            run = self.get()
            if run.is_terminal:
                return c.outcome(run)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(f"run {self.workflow_id} still {run.state_name} after {timeout} s")
            pause = interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic()))
            time.sleep(pause)
            interval = min(interval * 2, 2.0)

    def retry(self) -> RunHandle:
        """Re-drive a FAILED or CANCELLED run from its last good state (same id)."""
        self.started = self._t.call(c.retry(self.workflow_id))
        return self

    def cancel(self) -> m.CancelResult:
        """Ask the run to stop; it ends CANCELLED."""
        return self._t.call(c.cancel(self.workflow_id))


class Catalog:
    """The workflow types and their schemas."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def list_types(self, prefix: str | None = None) -> m.TypeList:
        """The types (and namespaces) whose name starts with `prefix`."""
        return self._t.call(c.list_types(prefix))

    def get_definition(self, workflow_type: str) -> m.Definition:
        """A type's states and transitions."""
        return self._t.call(c.get_definition(workflow_type))

    def get_schema(self, workflow_type: str) -> m.TypeSchema:
        """A type's input and output JSON Schemas."""
        return self._t.call(c.get_schema(workflow_type))

    def get_prerequisites(self, workflow_type: str) -> m.Prerequisites:
        """What must be set up before the type can run."""
        return self._t.call(c.get_prerequisites(workflow_type))


class Workflows:
    """Runs: start, read, list, follow, retry, cancel."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def handle(self, workflow_id: str) -> RunHandle:
        """A handle on an existing run (no request is made)."""
        return RunHandle(self._t, workflow_id)

    def start(
        self, workflow_type: str, initial_data: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> RunHandle:
        """Start a run; with `idempotency_key`, a repeated call returns the same run."""
        started = self._t.call(c.start(workflow_type, initial_data, idempotency_key))
        return RunHandle(self._t, started.workflow_id, started)

    def get(self, workflow_id: str) -> m.Run:
        """A run."""
        return self._t.call(c.get_run(workflow_id))

    def list(
        self,
        *,
        workflow_type: str | None = None,
        status: m.RunStatus | None = None,
        state_name: str | None = None,
        schedule_id: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[m.Run]:
        """Every run matching the filters, newest first, fetching page after page as it is iterated."""
        filters = {
            "workflow_type": workflow_type,
            "status": status,
            "state_name": state_name,
            "schedule_id": schedule_id,
            "limit": page_size,
        }
        return walk(lambda cursor: self._t.call(c.list_runs(filters, cursor)), lambda page: page.runs)

    def history(self, workflow_id: str) -> m.History:
        """Every transition of a run, in order."""
        return self._t.call(c.history(workflow_id))

    def stream(self, workflow_id: str) -> Iterator[m.RunEvent]:
        """The run's events (see RunHandle.events)."""
        return self._t.events(workflow_id)

    def retry(self, workflow_id: str) -> RunHandle:
        """Re-drive a FAILED or CANCELLED run."""
        return RunHandle(self._t, workflow_id).retry()

    def cancel(self, workflow_id: str) -> m.CancelResult:
        """Ask a run to stop."""
        return self._t.call(c.cancel(workflow_id))


class Plugins:
    """Provider families and their credential fields."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def list(self) -> builtins.list[m.Plugin]:
        """Every plugin."""
        return self._t.call(c.list_plugins())


class Connections:
    """Stored credentials of the organization (secrets are write-only)."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def create(
        self, plugin: str, name: str, secrets: Mapping[str, Any], config: Mapping[str, Any] | None = None
    ) -> m.ConnectionCreated:
        """Store a credential for one plugin; the answer holds no config (``get`` returns it)."""
        return self._t.call(c.create_connection(plugin, name, secrets, config))

    def list(self, plugin: str | None = None) -> builtins.list[m.Connection]:
        """The organization's connections, optionally of one plugin."""
        return self._t.call(c.list_connections(plugin))

    def get(self, connection_uuid: str) -> m.Connection:
        """A connection."""
        return self._t.call(c.get_connection(connection_uuid))

    def update(
        self,
        connection_uuid: str,
        *,
        name: str | None = None,
        secrets: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> m.Connection:
        """Rename, reconfigure or rotate secrets."""
        return self._t.call(c.update_connection(connection_uuid, {"name": name, "secrets": secrets, "config": config}))

    def delete(self, connection_uuid: str) -> None:
        """Delete a connection."""
        self._t.call(c.delete_connection(connection_uuid))


class Schedules:
    """Runs started on a cron expression or an interval."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def create(
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
        return self._t.call(c.create_schedule(workflow_type, initial_data, options))

    def list(self) -> builtins.list[m.Schedule]:
        """The organization's schedules, newest first."""
        return self._t.call(c.list_schedules())

    def get(self, schedule_id: str) -> m.Schedule:
        """A schedule."""
        return self._t.call(c.get_schedule(schedule_id))

    def delete(self, schedule_id: str) -> None:
        """Delete a schedule."""
        self._t.call(c.delete_schedule(schedule_id))

    def pause(self, schedule_id: str) -> m.Schedule:
        """Stop starting runs until unpaused."""
        return self._t.call(c.pause_schedule(schedule_id, True))

    def unpause(self, schedule_id: str) -> m.Schedule:
        """Start runs again."""
        return self._t.call(c.pause_schedule(schedule_id, False))

    def trigger(self, schedule_id: str) -> m.TriggerResult:
        """Start a run now."""
        return self._t.call(c.trigger_schedule(schedule_id))


class Hooks:
    """Webhook redirect endpoints and the events they received."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def create_endpoint(self, name: str, target_url: str, *, secret_ref: str | None = None) -> m.HookEndpointCreated:
        """Create an endpoint; its generated ``signing_secret`` is shown once, in this answer."""
        return self._t.call(c.create_hook_endpoint(name, target_url, secret_ref))

    def list_endpoints(self) -> builtins.list[m.HookEndpoint]:
        """The organization's endpoints (never their secrets)."""
        return self._t.call(c.list_hook_endpoints())

    def get_endpoint(self, endpoint_uuid: str) -> m.HookEndpoint:
        """An endpoint."""
        return self._t.call(c.get_hook_endpoint(endpoint_uuid))

    def delete_endpoint(self, endpoint_uuid: str) -> None:
        """Delete an endpoint and its events."""
        self._t.call(c.delete_hook_endpoint(endpoint_uuid))

    def rotate_secret(self, endpoint_uuid: str) -> m.HookSecretRotated:
        """Replace the signing secret; the new one is shown once, in this answer."""
        return self._t.call(c.rotate_hook_secret(endpoint_uuid))

    def list_events(self, endpoint_uuid: str, *, limit: int | None = None) -> builtins.list[m.HookEvent]:
        """An endpoint's events, newest first (`limit` 1-500, default 100)."""
        return self._t.call(c.list_hook_events(endpoint_uuid, limit))

    def get_event(self, event_uuid: str) -> m.HookEvent:
        """An event with its delivery attempts."""
        return self._t.call(c.get_hook_event(event_uuid))

    def replay_event(self, event_uuid: str) -> m.HookEventReplayed:
        """Deliver the event again, signed, through a hook.replay-event run (ConflictError once it has expired)."""
        return self._t.call(c.replay_hook_event(event_uuid))

    def acknowledge_event(self, event_uuid: str) -> m.HookEvent:
        """Mark a delivered event acknowledged (ConflictError while it is pending or once it has expired)."""
        return self._t.call(c.acknowledge_hook_event(event_uuid))


class Compositions:
    """Built-in types composed into a type of the organization, ``virtual.<uuid>@<version>``."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def create(
        self, name: str, steps: Sequence[Mapping[str, Any]], *, exposed_to_end_users: bool | None = None
    ) -> m.CompositionCreated:
        """Compose the steps into version 1 (a ValidationError names each step and field that is wrong)."""
        return self._t.call(c.create_composition(name, steps, exposed_to_end_users))

    def list(self) -> builtins.list[m.Composition]:
        """The latest version of each composition, newest first."""
        return self._t.call(c.list_compositions())

    def get(self, composition_uuid: str) -> m.CompositionDetail:
        """A composition's latest version and every version."""
        return self._t.call(c.get_composition(composition_uuid))

    def update(
        self,
        composition_uuid: str,
        name: str,
        steps: Sequence[Mapping[str, Any]],
        *,
        exposed_to_end_users: bool | None = None,
    ) -> m.CompositionCreated:
        """Create the next version; earlier versions stay startable."""
        return self._t.call(c.update_composition(composition_uuid, name, steps, exposed_to_end_users))


class Entitlements:
    """What the organization's payments chains granted."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def page(
        self, *, subject: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> m.EntitlementPage:
        """One page, newest first; pass its ``next_cursor`` as `cursor` for the next."""
        return self._t.call(c.list_entitlements(subject, limit, cursor))

    def list(self, *, subject: str | None = None, page_size: int | None = None) -> Iterator[m.Entitlement]:
        """Every entitlement (of `subject`), newest first, fetching page after page as it is iterated."""
        return walk(
            lambda cursor: self.page(subject=subject, limit=page_size, cursor=cursor), lambda page: page.entitlements
        )


class Apps:
    """End-user sign-in apps (provisioned by identity.app.provision runs)."""

    def __init__(self, transport: _Transport):
        self._t = transport

    def list(self) -> builtins.list[m.App]:
        """The organization's apps."""
        return self._t.call(c.list_apps())

    def clear_end_user_totp(self, client_uuid: str, end_user_uuid: str) -> None:
        """Turn TOTP off for an end user of one of the organization's apps.

        The end user then signs in with the password alone: the way back from a lost phone or a
        secret someone else enrolled. NotFoundError for an app or end user the organization does
        not have.
        """
        self._t.call(c.clear_end_user_totp(client_uuid, end_user_uuid))


class WorkflowEngine:
    """Synchronous client of the Workflow Engine Service.

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
        transport: httpx.BaseTransport | None = None,
    ):
        self._t = _Transport(base_url, token, timeout, max_retries, transport)
        self.catalog = Catalog(self._t)
        self.workflows = Workflows(self._t)
        self.plugins = Plugins(self._t)
        self.connections = Connections(self._t)
        self.schedules = Schedules(self._t)
        self.hooks = Hooks(self._t)
        self.compositions = Compositions(self._t)
        self.entitlements = Entitlements(self._t)
        self.apps = Apps(self._t)

    def me(self) -> m.Me:
        """Who the token is."""
        return self._t.call(c.me())

    def health(self) -> m.Health:
        """The health of the API, Temporal and the database (a 503 raises ServiceUnavailableError)."""
        return self._t.call(c.health())

    def close(self) -> None:
        """Close the connection pool."""
        self._t.http.close()

    def __enter__(self) -> WorkflowEngine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
