import time
from typing import Any, Callable, Dict, Optional

from .._core import RequestOptions
from .._generated.resources.calls import CallsBase
from .._streams import Download

TERMINAL_CALL_STATUSES = ("completed", "transferred", "voicemail", "failed", "busy", "no_answer", "canceled")


class Calls(CallsBase):
    """``client.calls``, with waiting for a call's end and its recording."""

    def wait_for(self, id: str, done: Callable[[Dict[str, Any]], bool], *, poll_interval: float = 1.0, wait_timeout: float = 300.0, options: Optional[RequestOptions] = None) -> Dict[str, Any]:
        """Polls the call until ``done(call)``; raises TimeoutError when ``wait_timeout`` passes first."""
        deadline = time.monotonic() + wait_timeout
        while True:
            call = dict(self.retrieve(id, options))
            if done(call):
                return call
            if time.monotonic() > deadline:
                raise TimeoutError(f"call {id} is still {call['status']} (recording {call.get('recording_status')}) after the wait")
            time.sleep(poll_interval)

    def wait_until_ended(self, id: str, **kwargs: Any) -> Dict[str, Any]:
        """Waits until the call has ended (any terminal status) and returns it."""
        return self.wait_for(id, lambda call: call["status"] in TERMINAL_CALL_STATUSES, **kwargs)

    def download_recording(self, id: str, **kwargs: Any) -> Download:
        """Waits until the call's MP3 is made, then opens it as a download (raises if it failed)."""
        call = self.wait_for(id, lambda c: c.get("recording_status") != "pending", **kwargs)
        if call.get("recording_status") != "ready":
            raise RuntimeError(f"call {id} has no recording (recording_status {call.get('recording_status')})")
        return self.recording_mp3(id, None, kwargs.get("options"))
