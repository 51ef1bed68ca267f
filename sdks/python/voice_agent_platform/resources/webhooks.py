from typing import Any, Mapping, Union

from .._generated.resources.webhooks import WebhooksBase
from ..webhooks import verify_webhook


class Webhooks(WebhooksBase):
    """``client.webhooks``: the tenant webhook's operations, and verification of deliveries."""

    def verify(self, payload: Union[str, bytes], headers: Mapping[str, Any], secret: str, **options: Any) -> Any:
        """Verifies a delivery (raw body, its headers, the ``whsec_`` secret); returns the parsed event."""
        return verify_webhook(payload, headers, secret, **options)
