"""voice-agent-platform: the official Python client of the Voice Agent Platform API."""

from ._auth import Tokens
from ._core import PageIterator, RequestOptions
from ._errors import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
    VoiceAgentError,
    WebhookVerificationError,
)
from ._generated.operations import OPERATIONS
from ._streams import Download, FileUpload, to_file
from ._version import VERSION
from .client import VoiceAgent
from .resources.calls import TERMINAL_CALL_STATUSES
from .webhooks import verify_webhook

__version__ = VERSION
__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "Download",
    "FileUpload",
    "InternalServerError",
    "NotFoundError",
    "OPERATIONS",
    "PageIterator",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestOptions",
    "TERMINAL_CALL_STATUSES",
    "Tokens",
    "VERSION",
    "ValidationError",
    "VoiceAgent",
    "VoiceAgentError",
    "WebhookVerificationError",
    "to_file",
    "verify_webhook",
]
