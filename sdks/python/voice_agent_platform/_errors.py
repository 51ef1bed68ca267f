"""Errors the SDK raises.

An answer of 4xx/5xx becomes an ApiError subclass chosen by status, carrying the problem+json
fields (RFC 9457) the platform sends; a request that got no answer is an ApiConnectionError
(ApiTimeoutError when the SDK's timeout ended it).
"""

from typing import Any, Dict, List, Mapping, Optional


class VoiceAgentError(Exception):
    """Base of every error of the SDK."""


class ApiError(VoiceAgentError):
    """The platform answered with an error status."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str]) -> None:
        problem: Dict[str, Any] = body if isinstance(body, dict) else {}
        self.status = status
        self.code: Optional[str] = problem.get("code") if isinstance(problem.get("code"), str) else None
        self.detail: Optional[str] = problem.get("detail") if isinstance(problem.get("detail"), str) else None
        self.type: Optional[str] = problem.get("type") if isinstance(problem.get("type"), str) else None
        request_id = problem.get("request_id")
        self.request_id: Optional[str] = request_id if isinstance(request_id, str) else headers.get("x-request-id")
        errors = problem.get("errors")
        self.errors: List[Dict[str, str]] = errors if isinstance(errors, list) else []
        self.headers = headers
        self.body = body
        text = self.detail or (body[:200] if isinstance(body, str) and body else "no detail")
        super().__init__(f"{status}{' ' + self.code if self.code else ''}: {text}")


class BadRequestError(ApiError):
    pass


class AuthenticationError(ApiError):
    pass


class PermissionDeniedError(ApiError):
    pass


class NotFoundError(ApiError):
    pass


class ConflictError(ApiError):
    pass


class ValidationError(ApiError):
    """422: ``errors`` lists the fields at fault (``path``, ``message``)."""


class RateLimitError(ApiError):
    pass


class InternalServerError(ApiError):
    pass


_BY_STATUS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
}


def api_error_of(status: int, body: Any, headers: Mapping[str, str]) -> ApiError:
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else ApiError)
    return cls(status, body, headers)


class ApiConnectionError(VoiceAgentError):
    """The request got no answer (connection refused or reset, DNS …)."""


class ApiTimeoutError(ApiConnectionError):
    """The SDK's timeout ended the request before an answer."""


class WebhookVerificationError(VoiceAgentError):
    """A webhook whose signature or timestamp does not verify."""
