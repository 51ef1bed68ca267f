"""A local HTTP server whose answers each test scripts per path (as the platform answers under load)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Set


class FakeServer:
    def __init__(self) -> None:
        self.scripts: Dict[str, List[Any]] = {}
        self.seen: Dict[str, List[Dict[str, Any]]] = {}
        self.refused_until: Dict[str, float] = {}
        self.expired_tokens: Set[str] = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_any(self) -> None:
                path = self.path.split("?")[0]
                body = self._body()
                authorization = self.headers.get("authorization")
                fake.seen.setdefault(path, []).append({"method": self.command, "key": self.headers.get("idempotency-key"), "authorization": authorization, "body": body, "headers": dict(self.headers)})
                # Like the platform: a request carrying one of these access tokens is refused as expired.
                if (authorization or "").replace("Bearer ", "", 1) in fake.expired_tokens:
                    answer = {"status": 401, "body": {"type": "about:blank", "title": "Unauthorized", "status": 401, "detail": "the access token has expired; refresh it", "code": "token_expired", "request_id": "req_fake"}}
                else:
                    answer = {"status": 429} if time.time() < fake.refused_until.get(path, 0) else (fake.scripts.get(path) or [{"status": 200}]).pop(0) if fake.scripts.get(path) else {"status": 200}
                if answer == "reset":
                    self.connection.close()
                    return
                if answer == "hang":
                    time.sleep(1.0)
                    return
                headers = answer.get("headers", {})
                if "retry-after" in headers:
                    fake.refused_until[path] = time.time() + float(headers["retry-after"])
                status = answer["status"]
                default = {"data": [], "has_more": False, "next_cursor": None, "access_token": "a", "refresh_token": "r", "expires_in": 60}
                problem = {"type": "about:blank", "title": "x", "status": status, "detail": "scripted", "code": "rate_limited" if status == 429 else "service_unavailable", "request_id": "req_fake"}
                data = json.dumps(answer.get("body", problem if status >= 400 else default)).encode()
                self.send_response(status)
                self.send_header("content-type", "application/problem+json" if status >= 400 else "application/json")
                self.send_header("x-request-id", "req_fake")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    chunks = b""
                    while True:
                        size = int(self.rfile.readline().strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            return chunks
                        chunks += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
