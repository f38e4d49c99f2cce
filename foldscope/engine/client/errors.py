"""Typed errors of a model call: infrastructure faults after retries, and refusals of the request.

A probe tells the harness's parameters from the model by these types, so each refusal a gateway
can state has its own class.
"""

from __future__ import annotations

from foldscope.core.errors import FoldscopeError, ModelError


class ClientError(FoldscopeError):
    """A model call failed. ``str(err)`` is one line and never contains a secret."""

    def __init__(self, message: str, *, model: str, status: int | None = None,
                 attempts: int = 1) -> None:
        super().__init__(message)
        self.model = model
        self.status = status
        self.attempts = attempts


class InfraError(ClientError):
    """Infrastructure failed after all retries (``kind``: timeout, connect, rate_limited,
    server_error)."""

    def __init__(self, message: str, *, model: str, kind: str, status: int | None = None,
                 attempts: int = 1) -> None:
        super().__init__(message, model=model, status=status, attempts=attempts)
        self.kind = kind


class ParameterRejected(ClientError):
    """The gateway has no endpoint that accepts the request's parameters (OpenRouter 404)."""


class ReasoningNotDisableable(ClientError):
    """The endpoint refuses to disable reasoning (400)."""


class RequestRejected(ClientError):
    """Any other 4xx (or a 5xx whose body is a validation error): the request was refused and
    retrying it would not help. ``parameter`` names the refused parameter when the endpoint said
    which (``response_format.type``)."""

    def __init__(self, message: str, *, model: str, status: int | None = None,
                 attempts: int = 1, parameter: str | None = None) -> None:
        super().__init__(message, model=model, status=status, attempts=attempts)
        self.parameter = parameter


class MissingApiKey(ClientError, ModelError):
    """The environment variable named by ``api_key_env`` is not set (the message names it)."""


class KeyRejected(RequestRejected):
    """The endpoint refused the API key (401/403): every call with it would fail, so a sweep
    stops at once, its rows left planned."""
