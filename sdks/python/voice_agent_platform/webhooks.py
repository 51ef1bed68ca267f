"""Verifies the platform's webhook deliveries.

Each delivery carries two signatures:

- Standard Webhooks: ``webhook-id``, ``webhook-timestamp``, ``webhook-signature: v1,<base64>`` (one
  or more, space-separated: after a rotation the old secret signs too), HMAC-SHA256 of
  ``id.timestamp.body`` keyed with the base64 bytes after ``whsec_``; the timestamp must be within
  the tolerance, which refuses replays of old deliveries.
- ``X-Service-Signature: sha256=<hex>``, HMAC-SHA256 of the raw body keyed with the whole secret
  string. It signs no timestamp, so ``webhook-timestamp`` (when present) is still checked.

Verify the raw body exactly as received: parsing and re-serialising JSON changes the bytes.
"""

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

from ._errors import WebhookVerificationError


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, (list, tuple)) else str(value)
    return None


def _check_timestamp(value: Optional[str], tolerance: int, now: Optional[float], required: bool) -> None:
    if value is None:
        if required:
            raise WebhookVerificationError("missing webhook-timestamp")
        return
    try:
        seconds = int(value)
    except ValueError:
        raise WebhookVerificationError("invalid webhook-timestamp") from None
    current = int(now if now is not None else time.time())
    if abs(current - seconds) > tolerance:
        raise WebhookVerificationError("webhook-timestamp outside the tolerance")


def _verify_standard(body: bytes, headers: Mapping[str, Any], secret: str, tolerance: int, now: Optional[float]) -> None:
    webhook_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not webhook_id or not signatures:
        raise WebhookVerificationError("missing webhook-id or webhook-signature")
    _check_timestamp(timestamp, tolerance, now, True)
    key = base64.b64decode(secret[6:] if secret.startswith("whsec_") else secret)
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    if not any(hmac.compare_digest(candidate, expected) for candidate in signatures.split(" ")):
        raise WebhookVerificationError("no webhook-signature matches")


def _verify_service(body: bytes, headers: Mapping[str, Any], secret: str, tolerance: int, now: Optional[float]) -> None:
    signature = _header(headers, "x-service-signature")
    if not signature:
        raise WebhookVerificationError("missing X-Service-Signature")
    _check_timestamp(_header(headers, "webhook-timestamp"), tolerance, now, False)
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(signature, expected):
        raise WebhookVerificationError("X-Service-Signature does not match")


def verify_webhook(
    payload: Union[str, bytes],
    headers: Mapping[str, Any],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    scheme: str = "auto",
    now: Optional[float] = None,
) -> Any:
    """Verifies a delivery and returns its parsed event; raises WebhookVerificationError otherwise.

    ``scheme``: ``auto`` (Standard Webhooks when present, else X-Service-Signature), ``standard``
    or ``service``. ``now``: the current time in seconds (tests).
    """
    body = payload.encode() if isinstance(payload, str) else bytes(payload)
    standard = scheme == "standard" or (scheme == "auto" and _header(headers, "webhook-signature") is not None)
    if standard:
        _verify_standard(body, headers, secret, tolerance_seconds, now)
    else:
        _verify_service(body, headers, secret, tolerance_seconds, now)
    try:
        return json.loads(body)
    except ValueError:
        raise WebhookVerificationError("the body is not JSON") from None
