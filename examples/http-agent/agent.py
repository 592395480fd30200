#!/usr/bin/env python3
"""A minimal agent for Proctor's HTTP agent protocol, with Python's standard
library only. It clicks the first element of the accessibility table whose
name is the word after "click" in the instruction, then says DONE.

    python3 agent.py 8750          # then: proctor run --agent http --agent-url http://127.0.0.1:8750
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

state = {"task": None}


def decide(observation, history):
    words = state["task"]["instruction"].split()
    target = words[words.index("click") + 1].strip('".,') if "click" in words else None
    if history or target is None:
        return {"reply": "DONE", "format": "pyautogui"}
    for line in observation.get("tree", "").splitlines()[1:]:
        tag, name, text, x, y, w, h = line.split("\t")
        if name == target:
            cx, cy = int(x) + int(w) // 2, int(y) + int(h) // 2
            return {"reply": f"```python\npyautogui.click({cx}, {cy})\n```", "format": "pyautogui"}
    return {"actions": [{"kind": "fail"}]}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path == "/start":
            state["task"] = body["task"]
            answer = {}
        elif self.path == "/step":
            answer = decide(body["observation"], body.get("history") or [])
        elif self.path == "/stop":
            answer = {}
        else:
            self.send_error(404)
            return
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8750
    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on {server.server_port}", flush=True)
    server.serve_forever()
