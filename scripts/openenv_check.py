#!/usr/bin/env python3
"""OpenEnv client check of `calibrl serve`, with plain python3 (no packages).

Usage: openenv_check.py CALIBRL_BINARY

Plays episodes through serve's OpenEnv interface as OpenEnv's own client
does it (huggingface/OpenEnv at 385de5e, June 2026; the repository moved
from meta-pytorch/OpenEnv, whose 685de41 an earlier version followed:
src/openenv/core/env_client.py and generic_client.py): a WebSocket to
BASE/ws, one session per connection, {"type": "reset"|"step"|"state"|
"close", "data": {...}} sent, {"type": "observation"|"state"|"error",
"data": {...}} read back, a StepResult read from data's observation,
reward and done. reset(**kwargs) sends its keyword arguments as data,
json.dumps'd: env_server/types.py's ResetRequest has seed (a Python int,
written as a JSON number of any size) and episode_id (a string of at
most 255 characters), which every client may send. The agent's turns
are those `calibrl eval --episodes-out` logged; each episode is reset
with its logged seed as the number eval wrote and an episode_id, and
must come back with the same user turns and environment notes, and with
the reward eval reported. A step without the action's required message
is refused naming it. Then the HTTP routes (/reset, /step, /state,
/schema, /health), and --openenv-sessions: parallel sessions up to the
cap, CAPACITY_REACHED past it.

The WebSocket client is a minimal RFC 6455 one (text frames, masking,
fragments, ping, close), since the check must run without pip.
"""

import base64
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


class WebSocket:
    """A client WebSocket: connect, send text, receive text, close."""

    def __init__(self, url, timeout=60):
        assert url.startswith("ws://")
        hostport, _, path = url[len("ws://"):].partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port or 80)), timeout=timeout)
        self.rf = self.sock.makefile("rb")
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode())
        status = self.rf.readline().decode()
        headers = {}
        while True:
            line = self.rf.readline().decode().strip()
            if not line:
                break
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if " 101 " not in status:
            raise ConnectionError(f"handshake: {status.strip()}")
        want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != want:
            raise ConnectionError("handshake: wrong Sec-WebSocket-Accept")

    def _frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def send(self, obj):
        self._frame(0x1, json.dumps(obj).encode())

    def _read(self, n):
        b = self.rf.read(n)
        if len(b) != n:
            raise ConnectionError("connection closed")
        return b

    def recv(self):
        """The next text message, or None when the server closed."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            fin, opcode, n = b0 & 0x80, b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                return None
            if opcode == 0x9:
                self._frame(0xA, payload)
                continue
            if opcode in (0x1, 0x0):
                parts.append(payload)
                if fin:
                    return json.loads(b"".join(parts))

    def close(self):
        try:
            self._frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()


class EnvClient:
    """OpenEnv's GenericEnvClient, synchronously."""

    def __init__(self, base_url):
        self.ws = WebSocket("ws://" + base_url[len("http://"):].rstrip("/") + "/ws")

    def _send_and_receive(self, msg):
        self.ws.send(msg)
        resp = self.ws.recv()
        if resp is None:
            raise RuntimeError("server closed the session")
        if resp.get("type") == "error":
            d = resp.get("data", {})
            raise RuntimeError(f"Server error: {d.get('message')} (code: {d.get('code')})")
        return resp

    def reset(self, **kwargs):
        d = self._send_and_receive({"type": "reset", "data": kwargs})["data"]
        return d["observation"], d.get("reward"), d.get("done", False)

    def step(self, action):
        d = self._send_and_receive({"type": "step", "data": action})["data"]
        return d["observation"], d.get("reward"), d.get("done", False)

    def state(self):
        return self._send_and_receive({"type": "state"})["data"]

    def close(self):
        try:
            self.ws.send({"type": "close"})
        except OSError:
            pass
        self.ws.close()


def http(base, method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def segments(messages):
    """The logged messages cut at the agent's: what each observation adds."""
    segs, cur = [], []
    for m in messages:
        if m["role"] == "assistant":
            segs.append((cur, m["content"]))
            cur = []
        else:
            cur.append({"role": m["role"], "content": m["content"]})
    return segs, cur


def strip(msgs):
    return [{"role": m["role"], "content": m["content"]} for m in msgs]


def play(ep, reset_fn, step_fn):
    """Replays a logged episode; returns the final reward, or a reason."""
    segs, last = segments(ep["messages"])
    obs, reward, done = reset_fn()
    if reward is not None or done:
        return f"reset: reward {reward}, done {done}"
    if obs["episode_seed"] != str(ep["seed"]):
        return f"episode seed {obs['episode_seed']}, eval's {ep['seed']}"
    want = segs[0][0] if segs else last
    if strip(obs["messages"][1:]) != want or obs["messages"][0]["role"] != "system":
        return f"reset messages {obs['messages']}, want system + {want}"
    for i, (_, text) in enumerate(segs):
        obs, reward, done = step_fn(obs["episode_id"], {"message": text})
        want = segs[i + 1][0] if i + 1 < len(segs) else last
        if strip(obs["messages"]) != want:
            return f"step {i + 1}: messages {obs['messages']}, want {want}"
        if done != (i + 1 == len(segs)):
            return f"step {i + 1}: done {done}"
    return reward


def main():
    binary = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    sessions = 3
    server = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--openenv-sessions", str(sessions)],
                              stderr=open(os.path.join(tmp, "serve.log"), "w"))
    try:
        for _ in range(200):
            try:
                if http(base, "GET", "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        code, health = http(base, "GET", "/health")
        check(code == 200 and health == {"status": "healthy"}, f"GET /health: {code} {health}")
        code, schema = http(base, "GET", "/schema")
        check(code == 200 and schema["action"]["required"] == ["message"] and set(schema) == {"action", "observation", "state"},
              "GET /schema: action, observation and state schemas")

        # Agents whose episodes end both ways, so equal rewards mean something.
        played = equal = big = 0
        for task, agent in [("mathchat:easy", "scripted:sloppy"), ("docedit:easy", "scripted:careful"), ("mathchat", "scripted:guesser")]:
            out = os.path.join(tmp, task.replace(":", "_") + agent.replace(":", "_") + ".jsonl")
            ev = json.loads(subprocess.run(
                [binary, "eval", "--task", task, "--agent", agent, "--user", "human", "-n", "8",
                 "--seed", "5", "--max-turns", "6", "--episodes-out", out, "--json"],
                check=True, capture_output=True, text=True).stdout)
            eps = [json.loads(line) for line in open(out)]
            # Odd episodes by eval's seed and index, even ones by the
            # episode's own seed as eval logged it: a JSON number, most
            # above 2^53, which json.loads reads as an exact int and
            # json.dumps writes back as the same number.
            def kw(ep):
                k = {"task": task, "split": ep["split"], "index": ep["index"], "user": "human", "max_turns": 6, "episode_id": f"check/{ep['id']}"}
                if ep["index"] % 2:
                    k["seed"] = 5
                else:
                    k["episode_seed"] = ep["seed"]
                return k

            env = EnvClient(base)
            rewards = []
            for ep in eps:
                big += ep["index"] % 2 == 0 and ep["seed"] > 2**53
                try:
                    got = play(ep, lambda: env.reset(**kw(ep)), lambda _id, a: env.step(a))
                except RuntimeError as e:
                    got = str(e)
                check(got == ep["reward"], f"{task} {ep['id']} over /ws: reward {got}, eval's {ep['reward']}")
                played, equal = played + 1, equal + (got == ep["reward"])
                rewards.append(got if isinstance(got, (int, float)) else float("nan"))
                try:
                    st = env.state()
                except RuntimeError as e:
                    check(False, f"{task} {ep['id']}: state: {e}")
                    continue
                check(st.get("step_count") == ep["turns"] and st.get("done") and st.get("reward") == ep["reward"] and st.get("client_episode_id") == f"check/{ep['id']}",
                      f"{task} {ep['id']}: state step_count {st.get('step_count')}, done {st.get('done')}, reward {st.get('reward')}, client_episode_id {st.get('client_episode_id')}")
            try:
                env.reset(task=task, seed=5)
                env.step({})
                check(False, "a step without message was played")
            except RuntimeError as e:
                check("message" in str(e) and "VALIDATION_ERROR" in str(e), f"a step without message: {e}")
            env.close()
            mean = sum(rewards) / len(rewards)
            check(abs(mean - ev["reward"]) < 1e-9, f"{task} {agent}: mean reward over /ws {mean:.4f}, eval's {ev['reward']:.4f}")

            def http_reset(ep=eps[0]):
                code, d = http(base, "POST", "/reset", kw(ep))
                assert code == 200, d
                return d["observation"], d["reward"], d["done"]

            def http_step(eid, action):
                code, d = http(base, "POST", "/step", {"action": action, "episode_id": eid})
                assert code == 200, d
                return d["observation"], d["reward"], d["done"]

            got = play(eps[0], http_reset, http_step)
            check(got == eps[0]["reward"], f"{task} {eps[0]['id']} over HTTP /reset and /step: reward {got}, eval's {eps[0]['reward']}")

        check(big >= 6, f"{big} episodes reset by a logged seed above 2^53 sent as a JSON number")
        print(f"rewards equal to calibrl eval's over /ws: {equal} of {played} episodes")

        # Parallel sessions up to --openenv-sessions; one more is refused.
        clients = [EnvClient(base) for _ in range(sessions)]
        results = [None] * sessions

        def run(i):
            try:
                obs, _, _ = clients[i].reset(task="mathchat:easy", seed=i)
                obs, _, done = clients[i].step({"message": "What are the numbers?"})
                results[i] = obs["turn"]
            except Exception as e:  # noqa: BLE001: reported below
                results[i] = repr(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(sessions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        check(results == [1] * sessions, f"{sessions} sessions in parallel: {results}")
        extra = WebSocket(f"ws://127.0.0.1:{port}/ws")
        msg = extra.recv()
        check(msg is not None and msg["type"] == "error" and msg["data"]["code"] == "CAPACITY_REACHED",
              f"session {sessions + 1} of {sessions}: {msg}")
        extra.close()
        for c in clients:
            c.close()
    finally:
        server.terminate()
        server.wait(10)
    print(f"{failures} check(s) failed" if failures else "all OpenEnv checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
