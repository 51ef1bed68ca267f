"""The SDK against the real platform at VAP_BASE_URL (started by test/sdk/python.test.ts with
3-second access tokens): login and the shared refresh, typed errors, pagination, streamed uploads
and downloads, workspaces, voice sessions, and the README's quickstart run as printed."""

import base64
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from voice_agent_platform import AuthenticationError, NotFoundError, ValidationError, VoiceAgent, to_file

SDK = Path(__file__).resolve().parent.parent
BASE_URL = os.environ.get("VAP_BASE_URL", "")
PASSWORD = "correct horse battery"


def account():
    if not BASE_URL:
        raise RuntimeError("VAP_BASE_URL names the platform these tests run against (test/sdk/python.test.ts sets it)")
    email = f"py-{uuid.uuid4().hex[:10]}@example.com"
    VoiceAgent(BASE_URL).auth.register({"email": email, "password": PASSWORD})
    saved = []
    client = VoiceAgent(BASE_URL, email=email, password=PASSWORD, on_tokens=saved.append)
    return client, saved, email


def expire(client: VoiceAgent) -> None:
    """Waits out the access token by its own ``exp`` claim, which the server rounds up: it may
    outlive the ``expires_in`` the SDK counts from by up to a second."""
    payload = client.tokens.access_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    time.sleep(max(0.0, claims["exp"] + 0.05 - time.time()))


class PlatformTest(unittest.TestCase):
    def test_login_then_one_refresh_shared_by_concurrent_threads(self) -> None:
        client, saved, _ = account()
        me = client.auth.me()
        self.assertEqual(len(saved), 1, "on_tokens was told the login")
        expire(client)
        with ThreadPoolExecutor(5) as pool:
            pages = list(pool.map(lambda _: client.agents.list({"limit": 1}).first_page(), range(5)))
        self.assertTrue(all(isinstance(page["data"], list) for page in pages))
        self.assertEqual(len(saved), 2, "one refresh for the five requests")
        expire(client)
        resumed = VoiceAgent(BASE_URL, access_token=client.tokens.access_token, refresh_token=saved[-1].refresh_token)
        self.assertEqual(resumed.auth.me()["id"], me["id"])

    def test_typed_errors(self) -> None:
        with self.assertRaises(AuthenticationError) as caught:
            VoiceAgent(BASE_URL).agents.list().first_page()
        self.assertTrue(caught.exception.request_id)
        client, _, _ = account()
        with self.assertRaises(ValidationError) as invalid:
            client.agents.create({"name": "x", "max_duration_seconds": -5})
        self.assertEqual(invalid.exception.code, "validation_failed")
        self.assertTrue(any("max_duration_seconds" in e["path"] for e in invalid.exception.errors))

    def test_pagination(self) -> None:
        client, _, _ = account()
        created = {client.agents.create({"name": f"Agent {i}"})["id"] for i in range(5)}
        self.assertEqual({agent["id"] for agent in client.agents.list({"limit": 2})}, created)
        self.assertEqual(len(list(client.agents.list({"limit": 2}).pages())), 3)

    def test_pages_through_calls(self) -> None:
        client, _, _ = account()
        agent = client.agents.create({"name": "Caller"})
        placed = {
            client.calls.create({"agent_id": agent["id"], "to": "+15550100200", "simulation": {"caller_script": ["Goodbye!"]}})["id"]
            for _ in range(3)
        }
        pages = list(client.calls.list({"limit": 2}).pages())
        self.assertEqual(len(pages), 2)
        self.assertEqual({call["id"] for page in pages for call in page["data"]}, placed)

    def test_streamed_uploads_and_download(self) -> None:
        client, saved, _ = account()
        agent = client.agents.create({"name": "Uploader"})
        campaign = client.campaigns.create({"name": "Reminders", "agent_id": agent["id"]})
        # Idle past the access token's life: the upload, which cannot be resent, refreshes it first.
        expire(client)
        upload = client.campaigns.upload(campaign["id"], iter([b"phone,first_name\n", b"+15550100200,Grace\n", b"+15550100201,Alan\n"]))
        self.assertEqual(upload["accepted"], 2)
        self.assertGreaterEqual(len(saved), 2, "refreshed before the upload")
        base = client.knowledge_bases.create({"name": "FAQ"})
        file = io.BufferedReader(io.BytesIO(b"Opening hours: nine to five.\n"))
        source = client.knowledge_bases.add_source(base["id"], {"file": to_file(file, "hours.txt", "text/plain")})
        self.assertEqual(source["title"], "hours.txt")
        with client.campaigns.results(campaign["id"]) as results:
            self.assertEqual(results.content_type, "text/csv")
            csv = b"".join(results.iter_bytes(16)).decode()
        self.assertIn("+15550100201", csv)

    def test_workspace_selection_and_voice_session(self) -> None:
        client, _, _ = account()
        other = client.workspaces.create({"name": "Second"})
        there = client.with_workspace(other["id"])
        agent = there.agents.create({"name": "Elsewhere"})
        with self.assertRaises(NotFoundError):
            client.agents.retrieve(agent["id"])
        # A new workspace has no credit: the voice session runs in the personal one.
        home = client.agents.create({"name": "Voice"})
        session = client.voice_sessions.create({"agent_id": home["id"], "external_user_id": "user-1"})
        self.assertTrue(session["id"].startswith("vs_"))
        self.assertIn("token=", client.voice_sessions.media_url(session))
        self.assertEqual(client.voice_sessions.end(session["id"])["status"], "ended")

    def test_readme_quickstart_runs_as_printed(self) -> None:
        readme = (SDK / "README.md").read_text()
        program = re.search(r"## Quickstart[\s\S]*?```python\n([\s\S]*?)```", readme).group(1)
        self.assertEqual(program, (SDK / "examples" / "quickstart.py").read_text())
        _, _, email = account()
        with tempfile.TemporaryDirectory() as work:
            Path(work, "quickstart.py").write_text(program)
            env = {**os.environ, "PYTHONPATH": str(SDK), "VAP_EMAIL": email, "VAP_PASSWORD": PASSWORD}
            result = subprocess.run([sys.executable, "quickstart.py"], cwd=work, env=env, capture_output=True, text=True, timeout=100)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertRegex(result.stdout, r"(?m)^call completed after \d+ s$")
            self.assertRegex(result.stdout, r"(?m)^recording saved: \d+ bytes$")
            self.assertRegex(result.stdout, r"(?m)^verified webhook call\.ended: completed$")
            mp3 = Path(work, "call.mp3").read_bytes()
            self.assertGreater(len(mp3), 10_000)
            self.assertTrue(mp3[:3] == b"ID3" or (mp3[0] == 0xFF and mp3[1] & 0xE0 == 0xE0), mp3[:4])


if __name__ == "__main__":
    unittest.main()
