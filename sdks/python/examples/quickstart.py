import http.server
import os
import threading

from voice_agent_platform import VoiceAgent

# Log in (the SDK refreshes the access token by itself and tells on_tokens to save it)
client = VoiceAgent(
    os.environ.get("VAP_BASE_URL", "http://localhost:3000"),
    email=os.environ["VAP_EMAIL"],
    password=os.environ["VAP_PASSWORD"],
    on_tokens=lambda tokens: print("tokens refreshed"),
)

# A webhook receiver: every delivery is verified before it is trusted
secret = ""
ended = threading.Event()


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        try:
            event = client.webhooks.verify(body, dict(self.headers), secret)
        except Exception as error:
            self.send_response(400)
            self.end_headers()
            return
        self.send_response(204)
        self.end_headers()
        if event["type"] == "call.ended":
            print(f"verified webhook call.ended: {event['data']['status']}")
            ended.set()

    def log_message(self, *args):
        pass


receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
threading.Thread(target=receiver.serve_forever, daemon=True).start()

# Create an agent that sends its call events to the receiver
agent = client.agents.create({
    "name": "Front desk",
    "prompt": "You are the receptionist of Acme.",
    "first_message": "Hello, Acme here. How can I help?",
    "webhook_url": f"http://127.0.0.1:{receiver.server_address[1]}/webhooks",
})
secret = agent["webhook_secret"]

# Place a sandbox call: the simulated callee says the script through real audio
call = client.calls.create({
    "agent_id": agent["id"],
    "to": "+15550100200",
    "simulation": {"caller_script": ["Hi, what are your opening hours?", "Thanks, goodbye!"]},
})

# Wait for it to end, then stream its MP3 into a file
done = client.calls.wait_until_ended(call["id"])
print(f"call {done['status']} after {done['duration_seconds']} s")
with client.calls.download_recording(call["id"]) as recording:
    print(f"recording saved: {recording.save('call.mp3')} bytes")

# The signed call.ended webhook arrived and verified
ended.wait(60)
receiver.shutdown()
