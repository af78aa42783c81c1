"""Typed exceptions mirroring the API's error body ``{error: {code, message, details}}``."""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel


class FieldProblem(BaseModel):
    """One field a 422 names: its path, the rule it broke and a readable message."""

    field: str
    rule: str
    message: str


class WorkflowEngineError(Exception):
    """Base class of every error this SDK raises."""


class APIError(WorkflowEngineError):
    """The API answered with an error status; ``fields`` lists the fields its details name."""

    def __init__(self, status: int, code: str, message: str, details: Any = None, retry_after: float | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after

    @property
    def fields(self) -> list[FieldProblem]:
        """The failing fields, as the API named them (a 422's, a 400 invalid_cursor's); empty without them."""
        if not isinstance(self.details, list):
            return []
        return [FieldProblem.model_validate(d) for d in self.details if isinstance(d, dict)]


class BadRequestError(APIError):
    """400, 413 or 415: a malformed request (bad JSON, an unknown cursor, a body too large, not JSON)."""


class AuthenticationError(APIError):
    """401: a missing, unknown or revoked token."""


class PermissionDeniedError(APIError):
    """403: the token may not do this."""


class NotFoundError(APIError):
    """404: no such resource in the token's organization."""


class ConflictError(APIError):
    """409: the resource is not in a state that allows this (e.g. retrying a run that did not fail)."""


class ValidationError(APIError):
    """422: ``fields`` lists every failing field with its rule."""


class RateLimitError(APIError):
    """429: ``retry_after`` says how many seconds to wait."""


class ServiceUnavailableError(APIError):
    """503: a dependency of the service is down; ``retry_after`` when the API gave one."""


class APIConnectionError(WorkflowEngineError, ConnectionError):
    """The API could not be reached or the connection broke (refused, reset, timed out), retries included.

    Also a builtin ``ConnectionError``, so code catching network failures in general catches it; the
    httpx error is its ``__cause__``.
    """


def connection_error(error: httpx.TransportError) -> APIConnectionError:
    """The SDK's error for a transport failure, to raise ``from`` it (some httpx errors carry no message)."""
    return APIConnectionError(f"could not reach the Workflow Engine API: {str(error) or type(error).__name__}")


class WorkflowFailedError(WorkflowEngineError):
    """A run ended FAILED (or CANCELLED): ``fields`` holds its failure fields, ``state_data`` its last data."""

    def __init__(self, workflow_id: str, message: str, fields: dict[str, Any], state_data: dict[str, Any]):
        super().__init__(f"run {workflow_id} failed: {message}")
        self.workflow_id = workflow_id
        self.message = message
        self.fields = fields
        self.state_data = state_data


class WaitTimeoutError(WorkflowEngineError, TimeoutError):
    """``wait()`` gave up before the run ended."""


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: BadRequestError,
    415: BadRequestError,
    422: ValidationError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header given in seconds (the form this API sends)."""
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def error_for(response: httpx.Response) -> APIError:
    """The typed exception for an error response, read from the API's error body."""
    code, message, details = "http_error", response.reason_phrase or "error", None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        code = str(error.get("code", code))
        message = str(error.get("message", message))
        details = error.get("details")
    cls = _BY_STATUS.get(response.status_code, APIError)
    return cls(response.status_code, code, message, details, retry_after(response))
