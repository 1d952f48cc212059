"""A minimal client of `calibrl serve`'s environment API, standard library only.

Copy this file beside whichever adapter you use (calibrl_verl.py,
calibrl_verl_reward.py, calibrl_trl.py, calibrl_openrlhf.py). Seeds travel
as strings: a 64-bit episode seed does not survive JSON parsers that read
numbers as doubles.

The client blocks; adapters that run inside an event loop (verl's agent
loop, OpenRLHF's executor) call it through asyncio.to_thread, so one slow
user reply never stalls the other rollouts on that loop.
"""

import json
import os
import urllib.error
import urllib.request

# The keys of an exported row's interaction_kwargs that open an episode
# (`calibrl export --kind prompts`); "name" only picks the interaction.
EPISODE_KEYS = ("task", "split", "index", "sample", "episode_seed", "seed", "max_turns", "user")


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


class Client:
    def __init__(self, base_url="http://127.0.0.1:8080", token=None, token_env="CALIBRL_TOKEN", timeout=300):
        self.base_url = base_url.rstrip("/")
        self.token = token if token is not None else os.environ.get(token_env or "", "")
        self.timeout = timeout

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
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

    def create(self, user="human", **kwargs):
        """Opens an episode from interaction_kwargs; returns {"id", "observation"}."""
        body = {k: v for k, v in kwargs.items() if k in EPISODE_KEYS and v is not None}
        body.setdefault("user", user)
        for k in ("episode_seed", "seed"):
            if k in body:
                body[k] = str(body[k])  # exact whatever the row's reader did to it
        return self._call("POST", "/v1/episodes", body)

    def turn(self, episode_id, message, messages=None):
        """Sends the agent's message; returns {"note", "reply", "reply_note", "done", "reward", "info"}.

        messages, when given, is the conversation so far as the trainer holds
        it (verl's list): any serve replica, or one restarted, then rebuilds
        the episode from it (docs/serve.md)."""
        body = {"message": message}
        if messages is not None:
            body["messages"] = [{"role": m.get("role"), "content": m.get("content") or ""} for m in messages]
        return self._call("POST", f"/v1/episodes/{episode_id}/turns", body)

    def transcript(self, episode_id):
        return self._call("GET", f"/v1/episodes/{episode_id}")

    def delete(self, episode_id):
        try:
            self._call("DELETE", f"/v1/episodes/{episode_id}")
        except CalibrlError as e:
            if e.status != 404:  # already expired: nothing to free
                raise
