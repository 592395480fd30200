#!/usr/bin/env python3
"""A minimal judge for Proctor's judge checks, with Python's standard library
only. It speaks the OpenAI chat-completions API (POST /v1/chat/completions)
and decides by a trivial rule: an expectation (or a criterion) passes when
every phrase it quotes in double quotes stands in the text evidence, and fails
when it quotes none. A real judge is a model; this one shows the format.

    python3 judge.py 8760          # then: proctor run ... --judge-model local --judge-base-url http://127.0.0.1:8760/v1

What Proctor sends: a system message (the rules and the reply's form) and one
user message whose first text part holds "Expectation:", optionally
"Criteria:" (lines `- id "ID": text`) and the line "The code of this
request's evidence is CODE."; each text evidence follows in its own part
between the lines "BEGIN EVIDENCE CODE" and "END EVIDENCE CODE", each
screenshot as an image_url part. What it must answer: one JSON object,
{"verdict": "pass" or "fail", "reason": "..."} plus, where criteria were
given, "criteria": [{"id": ..., "pass": true or false, "reason": ...}].
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def texts(message):
    """The text parts of a message, whose content is a string or a list."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [p.get("text", "") for p in content or [] if p.get("type") == "text"]


def read_request(messages):
    """The expectation, the criteria (id, text) and the text evidence."""
    user = next(m for m in messages if m.get("role") == "user")
    parts = texts(user)
    head = parts[0]
    expectation = head.split("Expectation:\n", 1)[1].split("\n\n", 1)[0].strip()
    criteria = re.findall(r'^- id "((?:[^"\\]|\\.)*)": (.*)$', head, re.M)
    code = re.search(r"The code of this request's evidence is (\w+)\.", head).group(1)
    evidence = []
    for p in parts[1:]:
        m = re.search(r"^BEGIN EVIDENCE %s\n(.*)\nEND EVIDENCE %s$" % (code, code), p, re.M | re.S)
        if m:
            evidence.append(m.group(1))
    return expectation, criteria, "\n".join(evidence)


def holds(statement, evidence):
    quoted = re.findall(r'"([^"]+)"', statement)
    missing = [q for q in quoted if q not in evidence]
    if not quoted:
        return False, "the statement quotes nothing to look for"
    if missing:
        return False, "the evidence lacks %s" % json.dumps(missing[0])
    return True, "the evidence holds %s" % ", ".join(json.dumps(q) for q in quoted)


def decide(messages):
    expectation, criteria, evidence = read_request(messages)
    if not criteria:
        ok, reason = holds(expectation, evidence)
        return {"verdict": "pass" if ok else "fail", "reason": reason}
    results = []
    for cid, text in criteria:
        ok, reason = holds(text, evidence)
        results.append({"id": json.loads('"%s"' % cid), "pass": ok, "reason": reason})
    passed = all(r["pass"] for r in results)
    return {"verdict": "pass" if passed else "fail",
            "reason": "%d of %d criteria hold" % (sum(r["pass"] for r in results), len(results)),
            "criteria": results}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        verdict = decide(body["messages"])
        answer = {
            "id": "judge-1", "object": "chat.completion", "created": 0, "model": body.get("model", "local"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(verdict)}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8760), Handler)
    print("listening on %d" % server.server_address[1], flush=True)
    server.serve_forever()
