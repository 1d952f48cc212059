"""A minimal client of `calibrl serve`'s environment API, standard library only.

Copy this file beside whichever adapter you use (calibrl_verl_v07.py,
calibrl_verl_reward.py, calibrl_trl.py, calibrl_openrlhf.py). Seeds travel
as strings: a 64-bit episode seed does not survive JSON parsers that read
numbers as doubles.

The client blocks; adapters that run inside an event loop (verl's agent
loop, OpenRLHF's executor) call it through asyncio.to_thread, so one slow
user reply never stalls the other rollouts on that loop.

Replicas: base_url may name several `calibrl serve` replicas (a list, or
one string with commas; CALIBRL_URL=http://a:8080,http://b:8080). An
Episode keeps its conversation in calibrl's order and sends it with every
turn, so any replica answers any turn (docs/serve.md: a replica that does
not hold the episode rebuilds it from the messages, a remote:MODEL user's
included). A call that finds its replica gone (connection refused or
reset, a timeout, 502, 503, 504, 429) is sent again to the next replica,
after a backoff that doubles from `backoff` seconds up to `max_backoff`,
at most `attempts` times in all; Client.retries counts the calls sent
again.
"""

import http.client
import itertools
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request

# The keys of an exported row's interaction_kwargs that open an episode
# (`calibrl export --kind prompts`); "name" only picks the interaction.
# logged_user and opening say who opened the logged episode and how: the
# server opens the episode with that opening when it is played with
# another user, and refuses it naming the cause when the same user opens
# otherwise.
EPISODE_KEYS = ("task", "split", "index", "sample", "episode_seed", "seed", "max_turns", "user", "logged_user", "opening")

# New episodes go to each replica in turn, across every Client of the
# process: TRL makes one environment, hence one Client, per rollout.
_next_replica = itertools.count()

# Statuses a replica answers when it, or what it stands on, is not there:
# the same call may succeed on another replica.
RETRY_STATUS = (429, 502, 503, 504)


class CalibrlError(RuntimeError):
    """A request the server refused: status, OpenAI-shaped error body."""

    def __init__(self, status, body):
        err = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(f"calibrl serve: {status}: {err.get('message', body)}")
        self.status, self.body = status, body


def episode_kwargs(row):
    """The interaction kwargs of an exported row, from whichever column the
    trainer hands over: a JSON string (OpenRLHF's label), a dict of them, or
    a whole row (extra_info.interaction_kwargs)."""
    if isinstance(row, str):
        try:
            row = json.loads(row)
        except ValueError as e:
            raise ValueError(
                f"calibrl: label {row[:80]!r} is not the JSON of interaction_kwargs ({e}): "
                "train on rows of `calibrl export --kind prompts` and pass OpenRLHF --data.label_key label"
            ) from None
    if not isinstance(row, dict):
        raise ValueError(f"calibrl: want interaction_kwargs as a dict or JSON string, got {type(row).__name__}")
    extra = row.get("extra_info")
    if isinstance(extra, dict) and isinstance(extra.get("interaction_kwargs"), dict):
        row = extra["interaction_kwargs"]
    if "task" not in row:
        raise ValueError(f"calibrl: no task in {sorted(row)}: is this a row of `calibrl export --kind prompts`?")
    return dict(row)


def turn_messages(turn):
    """What the agent reads after its turn, in the transcript's order and
    roles, as calibrl's own policies read it (dialog.AgentChat): the
    environment's note on the agent's turn as a system message (docedit's
    current document), the user's reply, then the note on the reply as a
    system message (mathchat's ledger). Empty parts are left out."""
    out = []
    if turn.get("note"):
        out.append({"role": "system", "content": turn["note"]})
    if turn.get("reply"):
        out.append({"role": "user", "content": turn["reply"]})
    if turn.get("reply_note"):
        out.append({"role": "system", "content": turn["reply_note"]})
    return out


def turn_text(turn):
    """turn_messages as the one string a trainer takes back (verl's user
    message, TRL's tool result): the same parts in the same order, a blank
    line between them. The notes name themselves ("Current document:",
    "Still missing:", "Every number told."), so nothing is added."""
    return "\n\n".join(m["content"] for m in turn_messages(turn))


def _transient(err):
    """Whether a failed call may succeed on another replica."""
    if isinstance(err, CalibrlError):
        return err.status in RETRY_STATUS
    return isinstance(err, (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError))


class Client:
    def __init__(self, base_url="http://127.0.0.1:8080", token=None, token_env="CALIBRL_TOKEN", timeout=300,
                 attempts=8, backoff=0.05, max_backoff=2.0):
        urls = base_url.split(",") if isinstance(base_url, str) else list(base_url)
        self.base_urls = [u.strip().rstrip("/") for u in urls if u.strip()]
        if not self.base_urls:
            raise ValueError("calibrl: no base_url")
        self.base_url = self.base_urls[0]
        self.token = token if token is not None else os.environ.get(token_env or "", "")
        self.timeout = timeout
        self.attempts, self.backoff, self.max_backoff = max(1, attempts), backoff, max_backoff
        self.retries = 0
        self._lock = threading.Lock()

    def _call(self, method, path, body=None):
        """One call to base_url, the first replica, not sent again."""
        return self._request(self.base_url, method, path, body)

    def _request(self, base_url, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(base_url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode(errors="replace")
            raise CalibrlError(e.code, body) from None

    def replica(self):
        """The replica a new episode starts on: each in turn."""
        return next(_next_replica) % len(self.base_urls)

    def call(self, method, path, body=None, replica=0, tally=None):
        """The call, sent to replica (an index of base_urls) and, while it
        fails transiently, to the next ones with a growing pause, at most
        attempts times. Returns (the answer, the replica that gave it).

        tally, when given, is a dict whose "retries" counts this caller's
        calls sent again (one episode's, say), where self.retries counts
        those of every thread sharing the client."""
        n = len(self.base_urls)
        for i in range(self.attempts):
            at = (replica + i) % n
            try:
                return self._request(self.base_urls[at], method, path, body), at
            except Exception as e:  # noqa: BLE001 -- sorted by _transient
                if i == self.attempts - 1 or not _transient(e):
                    raise
            with self._lock:
                self.retries += 1
            if tally is not None:
                tally["retries"] = tally.get("retries", 0) + 1
            time.sleep(min(self.backoff * 2**i, self.max_backoff))
        raise AssertionError("unreachable")

    @staticmethod
    def _create_body(user, kwargs):
        body = {k: v for k, v in kwargs.items() if k in EPISODE_KEYS and v is not None}
        body.setdefault("user", user)
        for k in ("episode_seed", "seed"):
            if k in body:
                body[k] = str(body[k])  # exact whatever the row's reader did to it
        return body

    @staticmethod
    def _turn_body(message, messages=None):
        body = {"message": message}
        if messages is not None:
            body["messages"] = [{"role": m.get("role"), "content": m.get("content") or ""} for m in messages]
        return body

    def create(self, user="human", **kwargs):
        """Opens an episode from interaction_kwargs; returns {"id", "observation"}."""
        return self.call("POST", "/v1/episodes", self._create_body(user, kwargs), self.replica())[0]

    def turn(self, episode_id, message, messages=None):
        """Sends the agent's message; returns {"note", "reply", "reply_note", "done", "reward", "info"}.

        messages, when given, is the conversation so far as the trainer holds
        it (verl's list): any serve replica, or one restarted, then rebuilds
        the episode from it (docs/serve.md)."""
        body = self._turn_body(message, messages)
        # Without messages only the replica holding the episode answers:
        # one replica, not sent on.
        if messages is None:
            return self._call("POST", f"/v1/episodes/{episode_id}/turns", body)
        return self.call("POST", f"/v1/episodes/{episode_id}/turns", body)[0]

    def transcript(self, episode_id):
        return self._call("GET", f"/v1/episodes/{episode_id}")

    def delete(self, episode_id, replica=0):
        """Frees the episode on the replica that last answered it. A
        replica that is gone holds nothing to free, and the copies other
        replicas rebuilt expire (--episode-ttl): neither is an error."""
        try:
            self._request(self.base_urls[replica], "DELETE", f"/v1/episodes/{episode_id}")
        except CalibrlError as e:
            if e.status != 404:  # already expired: nothing to free
                raise
        except Exception as e:  # noqa: BLE001 -- sorted by _transient
            if not _transient(e):
                raise


class Episode:
    """One served episode as an adapter holds it: its id, the replica that
    last answered it, and the conversation in calibrl's order (the
    opening, then each agent turn, the environment's note on it as a
    system message, the user's reply, the note on the reply), sent with
    every turn so that any replica answers it.

    kwargs are a row's interaction_kwargs (episode_kwargs); user is the
    user to play against. opening, when given, is the user's opening the
    agent reads (the row's prompt's last message): the server opens the
    episode with it when the row was logged with another user
    (kwargs["logged_user"]), and refuses the episode naming the cause when
    the same user opens otherwise."""

    def __init__(self, client, user, kwargs, opening=None):
        kw = dict(kwargs)
        if opening is not None:
            kw["opening"] = opening
        else:
            kw.pop("opening", None)
        self.client = client
        created, self.replica = client.call("POST", "/v1/episodes", client._create_body(user, kw), client.replica())
        self.id = created["id"]
        self.observation = created["observation"]
        self.messages = [dict(role=m["role"], content=m["content"]) for m in self.observation["messages"]]
        self.done = False

    @property
    def opening(self):
        return self.observation["messages"][0]["content"]

    def turn(self, message):
        """Sends the agent's message; returns the turn's answer ({"note",
        "reply", "reply_note", "done", "reward", "info"})."""
        body = {"message": message, "messages": self.messages}
        r, self.replica = self.client.call("POST", f"/v1/episodes/{self.id}/turns", body, self.replica)
        self.messages = self.messages + [{"role": "assistant", "content": message}] + turn_messages(r)
        self.done = bool(r["done"])
        return r

    def delete(self):
        self.client.delete(self.id, self.replica)
