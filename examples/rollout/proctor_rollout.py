"""A client of Proctor's rollout service (proctor serve), standard library only.

    client = RolloutClient("https://127.0.0.1:7500#sha256=3f1c...", token)
    env = ProctorEnv(client, "editor-save", observation="som")
    obs, info = env.reset()
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs))
        if terminated or truncated:
            break

RolloutClient speaks the HTTP API (GET /v1/openapi.json documents it);
ProctorEnv wraps one task in the reset/step shape of a gym environment. A
rollout that an environment fault ends raises RolloutFault: it has no
reward, and a trainer drops it rather than learn from it.
"""

import base64
import hashlib
import http.client
import json
import ssl
import urllib.parse


class RolloutError(Exception):
    """An error answer of the service: status, kind (exhausted, done...), retry_after seconds."""

    def __init__(self, status, kind, message, retry_after=0):
        super().__init__("%d %s: %s" % (status, kind, message))
        self.status, self.kind, self.retry_after = status, kind, retry_after


class RolloutFault(Exception):
    """A rollout ended by an infrastructure fault: no reward."""

    def __init__(self, final):
        super().__init__(final.get("reason", "infrastructure fault"))
        self.final = final


class RolloutClient:
    """The HTTP API of a rollout service.

    url is https://HOST:PORT#sha256=FINGERPRINT as proctor serve prints it
    (the certificate is pinned), https://HOST:PORT for a certificate this
    machine trusts, or http://HOST:PORT on loopback (--insecure-loopback).
    """

    def __init__(self, url, token, client=None, timeout=600):
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname or not u.port:
            raise ValueError("want https://HOST:PORT#sha256=FINGERPRINT or http://HOST:PORT, not %r" % url)
        self.scheme, self.host, self.port = u.scheme, u.hostname, u.port
        self.pin = None
        if u.fragment:
            if not u.fragment.startswith("sha256=") or u.scheme != "https":
                raise ValueError("the only fragment is #sha256=FINGERPRINT, of an https address")
            self.pin = u.fragment[len("sha256="):].replace(":", "").lower()
        self.token, self.client, self.timeout = token, client, timeout
        self.conn = None

    def _connect(self):
        if self.scheme == "http":
            return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        ctx = ssl.create_default_context()
        if self.pin:
            # Exactly the pinned certificate: checked after the handshake.
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(self.host, self.port, context=ctx, timeout=self.timeout)
        conn.connect()
        if self.pin:
            got = hashlib.sha256(conn.sock.getpeercert(binary_form=True)).hexdigest()
            if got != self.pin:
                conn.close()
                raise ssl.SSLError("the service's certificate has fingerprint %s, not the pinned %s" % (got, self.pin))
        return conn

    def call(self, method, path, body=None):
        """Makes a request; returns (content type, body bytes) or raises RolloutError."""
        headers = {"Authorization": "Bearer " + self.token}
        if self.client:
            headers["Proctor-Client"] = self.client
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):  # once more on a kept-alive connection the service closed
            if self.conn is None:
                self.conn = self._connect()
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if resp.getheader("Connection", "").lower() == "close":
            self.conn.close()
            self.conn = None
        ctype = resp.getheader("Content-Type", "")
        if resp.status >= 300:
            try:
                e = json.loads(raw)
            except ValueError:
                e = {"kind": "internal", "error": raw.decode(errors="replace")}
            retry = int(resp.getheader("Retry-After") or e.get("retry_after") or 0)
            raise RolloutError(resp.status, e.get("kind", ""), e.get("error", ""), retry)
        return ctype, raw

    def _json(self, method, path, body=None):
        _, raw = self.call(method, path, body)
        return json.loads(raw) if raw else None

    def tasks(self, gold=False):
        return self._json("GET", "/v1/tasks" + ("?gold=true" if gold else ""))["tasks"]

    def create(self, task, **options):
        """Starts a rollout: options are seed, observation, image, inline, format, unit, space."""
        return self._json("POST", "/v1/rollouts", dict(task=task, **options))

    def step(self, rollout_id, actions=None, reply=None, format=None):
        body = {}
        if reply is not None:
            body["reply"] = reply
            if format:
                body["format"] = format
        else:
            body["actions"] = actions if actions is not None else []
        return self._json("POST", "/v1/rollouts/%s/step" % rollout_id, body)

    def finish(self, rollout_id):
        return self._json("POST", "/v1/rollouts/%s/finish" % rollout_id)

    def get(self, rollout_id):
        return self._json("GET", "/v1/rollouts/%s" % rollout_id)

    def delete(self, rollout_id):
        self.call("DELETE", "/v1/rollouts/%s" % rollout_id)

    def image(self, observation):
        """The observation's screenshot (bytes, "png" or "jpeg"): inline, else fetched."""
        if observation.get("image"):
            return base64.b64decode(observation["image"]), observation.get("image_format", "png")
        if not observation.get("image_url"):
            return None, None
        ctype, raw = self.call("GET", observation["image_url"])
        return raw, ctype.split("/")[-1]


class ProctorEnv:
    """One task of a rollout service as a gym-style environment.

    step takes a list of unified actions (dicts) or a model's reply (a
    string, parsed in the format given). Its reward is the step's (the rise
    of the milestone score), plus the final reward of the task's checks on
    the step that ends the rollout. terminated: the policy ended it;
    truncated: a budget did. A fault raises RolloutFault.
    """

    def __init__(self, client, task, observation="screenshot", image="png", inline=False, format=None, space=None):
        self.client, self.task = client, task
        self.options = {"observation": observation, "image": image, "inline": inline}
        if format:
            self.options["format"] = format
        if space:
            self.options["space"] = space  # screen, smart-resize, anthropic or WIDTHxHEIGHT
        self.rollout = None

    def reset(self, seed=None):
        self.close()
        options = dict(self.options)
        if seed is not None:
            options["seed"] = seed
        ro = self.client.create(self.task, **options)
        self.rollout = ro
        if ro["status"] == "error":
            raise RolloutFault(ro["final"])
        info = dict(ro["info"], instruction=ro["instruction"], task=ro["task"])
        return ro.get("observation"), info

    def step(self, action):
        if isinstance(action, str):
            sr = self.client.step(self.rollout["id"], reply=action)
        else:
            sr = self.client.step(self.rollout["id"], actions=action)
        reward, info = sr["reward"], dict(sr["info"])
        terminated = truncated = False
        if sr["done"]:
            final = sr["final"]
            info["final"] = final
            if final["status"] == "error":
                raise RolloutFault(final)
            reward += final["reward"]
            truncated = final["outcome"] in ("uncompleted", "early_stopped")
            terminated = not truncated
            self.rollout = None
        return sr.get("observation"), reward, terminated, truncated, info

    def close(self):
        """Abandons a rollout still running (recorded as an error, no reward)."""
        if self.rollout is not None and self.rollout.get("status") == "running":
            try:
                self.client.delete(self.rollout["id"])
            except RolloutError:
                pass
        self.rollout = None
