"""The SDK against openapi.json and a local fake server: every operation, retries, errors, webhooks,
and the refresh of an access token before a streamed upload (which could not be resent after a 401)."""

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fake_server import FakeServer

from voice_agent_platform import OPERATIONS, ApiTimeoutError, InternalServerError, RateLimitError, VoiceAgent, WebhookVerificationError, verify_webhook

SDK = Path(__file__).resolve().parent.parent
SPEC = json.loads((SDK.parent.parent / "openapi.json").read_text())


class OfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()
        cls.client = VoiceAgent(cls.fake.url, api_key="sk_test", retry_delay=0.005, max_retry_delay=0.02)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        # Each test reads only its own requests (the operations test calls every path).
        self.fake.seen.clear()
        self.fake.refused_until.clear()
        self.fake.expired_tokens.clear()

    def test_generated_code_is_up_to_date(self) -> None:
        result = subprocess.run([sys.executable, "scripts/generate.py", "--check"], cwd=SDK, capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_every_operation_is_a_method_sending_its_method_and_path(self) -> None:
        count = 0
        for route, item in SPEC["paths"].items():
            for method, op in item.items():
                if method not in ("get", "post", "put", "patch", "delete"):
                    continue
                count += 1
                resource, name, http_method, _ = OPERATIONS[op["operationId"]]
                fn = getattr(getattr(self.client, resource), name)
                params = op.get("parameters") or []
                args = [f"v-{p['name']}" for p in params if p["in"] == "path"]
                if op.get("requestBody"):
                    args.append({})
                if any(p["in"] == "query" for p in params):
                    args.append({})
                result = fn(*args, {"max_retries": 0})
                if hasattr(result, "first_page"):
                    result.first_page()
                expected = route
                for p in params:
                    expected = expected.replace("{" + p["name"] + "}", f"v-{p['name']}")
                last = self.fake.seen[expected][-1]
                self.assertEqual((last["method"], http_method), (method.upper(), method.upper()), op["operationId"])
                self.assertEqual(last["headers"].get("User-Agent"), "voice-agent-platform-python/1.4.0")
                self.assertEqual("Authorization" in last["headers"], op.get("security") != [], op["operationId"])
        self.assertEqual(count, len(OPERATIONS))

    def test_post_retried_after_429_and_503_with_one_idempotency_key(self) -> None:
        self.fake.scripts["/v1/agents"] = [{"status": 429, "headers": {"retry-after": "1"}}, {"status": 503}, {"status": 201, "body": {"id": "agent_1"}}]
        self.assertEqual(self.client.agents.create({"name": "A"}), {"id": "agent_1"})
        attempts = self.fake.seen["/v1/agents"][-3:]
        self.assertEqual(len({a["key"] for a in attempts}), 1)
        self.assertEqual(len(self.fake.seen["/v1/agents"]), 3)

    def test_patch_not_repeated_after_503_and_error_is_typed(self) -> None:
        self.fake.scripts["/v1/agents/agent_3"] = [{"status": 503}]
        with self.assertRaises(InternalServerError) as caught:
            self.client.agents.update("agent_3", {"name": "C"})
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.request_id), (503, "service_unavailable", "req_fake"))
        self.assertEqual(len(self.fake.seen["/v1/agents/agent_3"]), 1)

    def test_retries_stop_at_max_retries(self) -> None:
        self.fake.scripts["/v1/wallet"] = [{"status": 429}, {"status": 429}, {"status": 429}]
        with self.assertRaises(RateLimitError):
            self.client.wallet.retrieve({"max_retries": 1})
        self.assertEqual(len(self.fake.seen["/v1/wallet"]), 2)

    def test_streamed_upload_sent_once(self) -> None:
        self.fake.scripts["/v1/campaigns/cmp_1/upload"] = [{"status": 503}]
        with self.assertRaises(InternalServerError):
            self.client.campaigns.upload("cmp_1", iter([b"phone\n", b"+15550100200\n"]))
        attempts = self.fake.seen["/v1/campaigns/cmp_1/upload"]
        self.assertEqual([a["body"] for a in attempts], [b"phone\n+15550100200\n"])

    def test_expired_token_refreshed_before_a_streamed_upload_once_for_concurrent_threads(self) -> None:
        self.fake.scripts["/v1/auth/login"] = [_token_pair("access-1", 0)]
        self.fake.scripts["/v1/auth/refresh"] = [_token_pair("access-2", 3600)]
        told = []
        user = VoiceAgent(self.fake.url, email="a@example.com", password="pw", on_tokens=told.append)
        user.auth.me()
        self.fake.expired_tokens.add("access-1")
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda campaign: user.campaigns.upload(campaign, iter([b"phone\n", b"+15550100200\n"])), ["cmp_a", "cmp_b"]))
        self.assertEqual(len(self.fake.seen["/v1/auth/refresh"]), 1, "one refresh for both uploads")
        self.assertEqual([tokens.access_token for tokens in told], ["access-1", "access-2"])
        for path in ("/v1/campaigns/cmp_a/upload", "/v1/campaigns/cmp_b/upload"):
            self.assertEqual([(a["authorization"], a["body"]) for a in self.fake.seen[path]], [("Bearer access-2", b"phone\n+15550100200\n")])

    def test_resumed_token_past_half_life_refreshed_before_a_streamed_upload_not_before_json(self) -> None:
        now = int(time.time())
        resumed = _jwt({"sub": "user_1", "iat": now - 40 * 60, "exp": now + 20 * 60})
        self.fake.scripts["/v1/auth/refresh"] = [_token_pair("access-3", 3600)]
        user = VoiceAgent(self.fake.url, access_token=resumed, refresh_token="rt_saved")
        user.auth.me()
        self.assertEqual(self.fake.seen["/v1/auth/me"][0]["authorization"], f"Bearer {resumed}")
        self.assertNotIn("/v1/auth/refresh", self.fake.seen, "a JSON request can be resent: no refresh ahead")
        user.campaigns.upload("cmp_c", iter([b"phone\n"]))
        self.assertEqual([json.loads(a["body"]) for a in self.fake.seen.get("/v1/auth/refresh", [])], [{"refresh_token": "rt_saved"}])
        self.assertEqual(self.fake.seen["/v1/campaigns/cmp_c/upload"][0]["authorization"], "Bearer access-3")

    def test_timeout(self) -> None:
        self.fake.scripts["/v1/health"] = ["hang", "hang"]
        with self.assertRaises(ApiTimeoutError):
            self.client.health.check({"timeout": 0.2, "max_retries": 1})
        self.assertEqual(len(self.fake.seen["/v1/health"]), 2)

    def test_webhook_signatures(self) -> None:
        secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123").decode()
        body = b'{"type":"call.ended","data":{"status":"completed"}}'
        ts = str(int(time.time()))
        standard = "v1," + base64.b64encode(hmac.new(base64.b64decode(secret[6:]), b"evt_1." + ts.encode() + b"." + body, hashlib.sha256).digest()).decode()
        service = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {"webhook-id": "evt_1", "webhook-timestamp": ts, "webhook-signature": f"v1,bm90IGl0 {standard}", "X-Service-Signature": service}
        self.assertEqual(verify_webhook(body, headers, secret)["type"], "call.ended")
        self.assertEqual(verify_webhook(body, headers, secret, scheme="service")["type"], "call.ended")
        for scheme in ("standard", "service"):
            with self.assertRaises(WebhookVerificationError):
                verify_webhook(body.replace(b"completed", b"failed"), headers, secret, scheme=scheme)
        with self.assertRaises(WebhookVerificationError):
            verify_webhook(body, headers, secret, now=time.time() + 600)


def _token_pair(access: str, expires_in: int) -> dict:
    return {"status": 200, "body": {"access_token": access, "refresh_token": f"rt_{access}", "token_type": "Bearer", "expires_in": expires_in}}


def _jwt(claims: dict) -> str:
    """An unsigned JWT: the SDK reads its claims, only the server verifies a signature."""
    parts = [json.dumps(part).encode() for part in ({"alg": "HS256", "typ": "JWT"}, claims)]
    return ".".join(base64.urlsafe_b64encode(part).rstrip(b"=").decode() for part in parts) + ".signature"


if __name__ == "__main__":
    unittest.main()
