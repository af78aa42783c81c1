"""Python client of the Workflow Engine Service: `WorkflowEngine` (sync) and `AsyncWorkflowEngine`."""

from .async_client import AsyncRunHandle, AsyncWorkflowEngine
from .client import RunHandle, WorkflowEngine
from .errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    FieldProblem,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    ValidationError,
    WaitTimeoutError,
    WorkflowEngineError,
    WorkflowFailedError,
)
from .models import CompletedEvent, FailedEvent, RunEvent, TransitionEvent

__all__ = [
    "APIError",
    "AsyncRunHandle",
    "AsyncWorkflowEngine",
    "AuthenticationError",
    "BadRequestError",
    "CompletedEvent",
    "ConflictError",
    "FailedEvent",
    "FieldProblem",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RunEvent",
    "RunHandle",
    "ServiceUnavailableError",
    "TransitionEvent",
    "ValidationError",
    "WaitTimeoutError",
    "WorkflowEngine",
    "WorkflowEngineError",
    "WorkflowFailedError",
]
