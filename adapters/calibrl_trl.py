"""calibrl's environment for TRL's GRPOTrainer(environment_factory=...).

TRL builds one CalibrlEnv per rollout and calls reset(**row) with the
dataset row's columns: rows of `calibrl export --kind prompts` carry
extra_info.interaction_kwargs, which reset reads (flat columns named like
its keys work too). The public method reply is the tool the model calls to
talk to the user; get_reward is the episode's reward (0 until it ends).
"""

from calibrl_client import Client


class CalibrlEnv:
    def __init__(self, base_url="http://127.0.0.1:8080", user="human", token_env="CALIBRL_TOKEN"):
        self._client = Client(base_url, token_env=token_env)
        self._user = user
        self._id = None
        self._reward = 0.0
        self._done = False

    def reset(self, **kwargs):
        """Opens the row's episode and returns the user's opening message."""
        kw = dict(kwargs)
        extra = kw.get("extra_info") or {}
        kw.update(extra.get("interaction_kwargs") or {})
        if self._id is not None:
            self._client.delete(self._id)
        ep = self._client.create(kw.pop("user", self._user), **kw)
        self._id, self._reward, self._done = ep["id"], 0.0, False
        return ep["observation"]["messages"][0]["content"]

    def reply(self, message: str) -> str:
        """Send your message to the user and return what the user says back.

        Args:
            message: what you say to the user: a question, or your final answer.
        """
        if self._done:
            return "(The user has left the conversation.)"
        r = self._client.turn(self._id, message)
        self._reward, self._done = r["reward"], r["done"]
        return r["reply"]

    def get_reward(self) -> float:
        return self._reward
