"""Pydantic models of every answer the API gives."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["RUNNING", "COMPLETED", "FAILED", "CANCELLED"]


class _Model(BaseModel):
    # A field the server adds later must not break an older client.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Me(_Model):
    """Who the bearer token is."""

    user_id: str
    organization_uuid: str
    username: str
    token_type: str
    principal_type: str


class Health(_Model):
    """The health of the API and its dependencies."""

    status: str
    temporal: str
    database: str


class TypeSummary(_Model):
    """One entry of the catalog."""

    workflow_type: str
    version: str
    kind: str
    description: str
    has_prerequisites: bool


class Namespace(_Model):
    """A catalog namespace and how many types it holds."""

    name: str
    count: int


class TypeList(_Model):
    """The catalog's answer to a listing."""

    types: list[TypeSummary]
    namespaces: list[Namespace]


class DefinitionState(_Model):
    """A state of a workflow type."""

    name: str
    initial: bool
    terminal: bool
    success: bool
    auto_advance: str | None


class DefinitionTransition(_Model):
    """An edge of a workflow type's state machine."""

    from_: str = Field(alias="from")
    action: str
    to: str


class Definition(_Model):
    """A workflow type's definition: its states and transitions."""

    workflow_type: str
    version: str
    kind: Literal["Atomic", "Linear", "Dag"]
    description: str
    states: list[DefinitionState]
    transitions: list[DefinitionTransition]
    exposed_to_end_users: bool
    has_prerequisites: bool


class TypeSchema(_Model):
    """A workflow type's input and output JSON Schemas (2020-12)."""

    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    has_prerequisites: bool


class Requirement(_Model):
    """A plugin a type needs credentials for, and the connections that provide them."""

    plugin: str
    fields: list[str]
    connections: list[str]


class Prerequisites(_Model):
    """The setup guide of a workflow type."""

    workflow_type: str
    satisfied: bool
    required: list[Requirement]
    steps: list[str]


class StartResult(_Model):
    """The answer to a start or a retry."""

    workflow_id: str
    state_name: str
    is_terminal: bool
    # True when a start with an idempotency key returned the run an earlier start created: the API
    # says so in its Idempotent-Replayed header, not in the body.
    replayed: bool = False


class Run(_Model):
    """A run as the projection holds it; ``state_data`` once terminal."""

    workflow_id: str
    workflow_type: str
    version: str
    organization_uuid: str
    state_name: str
    is_terminal: bool
    status: RunStatus
    attempt: int
    created_at: str
    updated_at: str
    state_data: dict[str, Any] | None = None


class RunPage(_Model):
    """One page of runs."""

    runs: list[Run]
    next_cursor: str | None


class Transition(_Model):
    """One transition of a run's history."""

    seq: int
    from_: str = Field(alias="from")
    to: str
    action: str
    at: str
    attempt: int
    data: Any = None


class History(_Model):
    """Every transition of a run, in order."""

    workflow_id: str
    transitions: list[Transition]


class Plugin(_Model):
    """A provider family and its credential fields."""

    name: str
    description: str
    fields: list[str]
    secrets_schema: dict[str, Any]
    config_schema: dict[str, Any]


class Connection(_Model):
    """A stored credential (never its secrets)."""

    connection_uuid: str
    plugin: str
    name: str
    config: dict[str, Any]
    created_at: str
    updated_at: str


class ConnectionCreated(_Model):
    """The answer to creating a connection: no config (``get`` returns the connection as stored)."""

    connection_uuid: str
    plugin: str
    name: str
    created_at: str


class CancelResult(_Model):
    """The answer to a cancel request."""

    workflow_id: str
    cancel_requested: bool


Overlap = Literal["skip", "buffer_one", "buffer_all", "cancel_other", "terminate_other", "allow_all"]


class ScheduleRun(_Model):
    """A run a schedule started."""

    workflow_id: str
    started_at: str


class Schedule(_Model):
    """A schedule; secret fields of ``initial_data`` come back as "[redacted]"."""

    schedule_id: str
    workflow_type: str
    initial_data: dict[str, Any]
    cron: str | None
    interval_seconds: int | None
    timezone: str
    overlap: Overlap
    paused: bool
    created_at: str
    next_action_times: list[str]
    recent_runs: list[ScheduleRun]


class TriggerResult(_Model):
    """The answer to triggering a schedule now."""

    schedule_id: str
    triggered: bool


class HookEndpoint(_Model):
    """A redirect endpoint (never its signing secret); POST events to ``ingress_url`` without a token."""

    endpoint_uuid: str
    name: str
    target_url: str
    ingress_url: str
    secret_source: Literal["generated", "secret_ref"]
    secret_ref: str | None
    state: str
    created_at: str


class HookEndpointCreated(HookEndpoint):
    """A new endpoint: ``signing_secret`` is shown once, here (None when it came from ``secret_ref``)."""

    signing_secret: str | None = Field(default=None, repr=False)


class HookSecretRotated(HookEndpoint):
    """An endpoint after rotate-secret: the new ``signing_secret`` is shown once, here."""

    signing_secret: str = Field(repr=False)


HookEventState = Literal["pending", "delivered", "acknowledged", "expired"]


class HookDeliveryAttempt(_Model):
    """One delivery of an event to the endpoint's target."""

    at: str
    status_code: int | None
    latency_ms: int
    error: str | None = None


class HookEvent(_Model):
    """An event an endpoint received (``body`` as received) and its delivery attempts."""

    event_uuid: str
    endpoint_uuid: str
    state: HookEventState
    body: str
    headers: dict[str, str]
    received_at: str
    delivered_at: str | None
    acknowledged_at: str | None
    expired_at: str | None
    attempts: list[HookDeliveryAttempt]


class HookEventReplayed(_Model):
    """The hook.replay-event run delivering an event again."""

    event_uuid: str
    workflow_id: str


class CompositionCreated(_Model):
    """A composition version: start ``workflow_type`` (``virtual.<uuid>@<version>``) like any type."""

    composition_uuid: str
    version: int
    workflow_type: str
    input_schema: dict[str, Any]


class CompositionStep(_Model):
    """A step of a composition: a built-in type (or "route") and where each input field comes from."""

    id: str
    workflow_type: str
    inputs: dict[str, dict[str, Any]]


class Composition(CompositionCreated):
    """The latest version of a composition."""

    name: str
    exposed_to_end_users: bool
    steps: list[CompositionStep]
    created_at: str
    updated_at: str


class CompositionVersion(_Model):
    """One version of a composition (every one startable)."""

    version: int
    workflow_type: str
    created_at: str


class CompositionDetail(Composition):
    """A composition with every version, newest first."""

    versions: list[CompositionVersion]


class Entitlement(_Model):
    """What a payments chain granted a subject."""

    entitlement_uuid: str
    subject: str
    source_event_id: str
    event_type: str
    object_id: str | None
    event_metadata: dict[str, Any]
    workflow_id: str
    granted_at: str


class EntitlementPage(_Model):
    """One page of entitlements; pass ``next_cursor`` back as ``cursor`` for the next."""

    entitlements: list[Entitlement]
    next_cursor: str | None


class App(_Model):
    """An end-user sign-in app (provisioned by identity.app.provision)."""

    client_key: str
    client_uuid: str
    name: str
    redirect_uris: list[str]
    created_at: str
    updated_at: str


class TransitionEvent(_Model):
    """A stream event: the run moved (``seq`` is the event id)."""

    event: Literal["transition"] = "transition"
    seq: int
    from_: str = Field(alias="from")
    to: str
    action: str
    at: str


class CompletedEvent(_Model):
    """The last stream event of a run that succeeded."""

    event: Literal["completed"] = "completed"
    workflow_id: str
    state_name: str
    state_data: dict[str, Any]


class FailedEvent(_Model):
    """The last stream event of a run that failed (or was cancelled): ``error`` holds the failure fields."""

    event: Literal["failed"] = "failed"
    workflow_id: str
    state_name: str
    error: dict[str, Any]
    state_data: dict[str, Any]


RunEvent = TransitionEvent | CompletedEvent | FailedEvent
