"""calibrl's environment for TRL's GRPOTrainer(environment_factory=...).

Written against TRL at f2cd577 (huggingface/trl, 2026; released as 1.8 and
later) and its tags v0.29.0 to v1.7.1, trl/trainer/grpo_trainer.py:

  - TRL calls reset(**row) with every column of the dataset row, and
    appends what it returns to the content of the prompt's last message.
    Instances are pooled: one is reset again for a later batch's row.
    Rows of `calibrl export --kind prompts` already end with the user's
    opening, so reset sends it with the row's logged_user: the server
    opens the episode with it when the training user is another (rows
    logged against the human proxy, trained against remote:calibrl-sim),
    and refuses it naming the cause when the same user opens otherwise;
    reset returns None (nothing appended). A row without the opening (a
    prompt of the instructions alone, or none: TRL >= 1.8 then starts
    from an empty user message, and reset is not given the prompt) gets
    the user's own opening from reset.
  - Every public method but reset (and, from 1.8, get_reward) is a tool
    the model may call; its docstring is the tool's description. reply is
    the one tool: the model's message to the user; what comes back is the
    user's reply with the environment's notes around it, in calibrl's
    order (calibrl_client.turn_text), as the tool result.
  - TRL >= 1.8: get_reward() is the environment's reward, called once per
    finished rollout: CalibrlEnv. Pass no reward_funcs (or others, summed).
  - TRL 0.29 to 1.7 expose get_reward to the model as a tool (and refuse a
    method without a docstring). Use LegacyCalibrlEnv, which has none, with
    reward_funcs=[calibrl_trl.reward]: those versions pass the rollouts'
    environments to reward functions as environments=.

The reward is the task's score once the user has ended the episode or the
turn limit is reached, and 0 for a rollout that stopped calling reply
before that (the episode is then released unscored). Reading the reward
releases the episode on the server.

base_url may name several serve replicas (comma-separated): each turn
carries the conversation, and a turn whose replica is gone goes to the
next one (calibrl_client.Episode).
"""

from calibrl_client import Client, Episode, episode_kwargs, turn_text


class _Episode:
    """One rollout's episode on the service; TRL reuses the instance,
    calling reset before each rollout."""

    def __init__(self, base_url="http://127.0.0.1:8080", user="human", token_env="CALIBRL_TOKEN"):
        self._client = Client(base_url, token_env=token_env)
        self._user = user
        self._ep = None
        self._reward = 0.0
        self._done = False

    def reset(self, **kwargs):
        """Opens the row's episode; returns the opening only when the row's
        prompt does not already end with it."""
        self._release()
        kw = episode_kwargs(kwargs)
        user = kw.pop("user", self._user)
        prompt = kwargs.get("prompt")
        shown = None
        if isinstance(prompt, list) and prompt and prompt[-1].get("role") == "user" and prompt[-1].get("content"):
            shown = prompt[-1]["content"]
        self._ep = Episode(self._client, user, kw, opening=shown)
        self._reward, self._done = 0.0, False
        if shown is None:
            return self._ep.opening
        if shown != self._ep.opening:  # a server older than the rows: it did not check
            opening = self._ep.opening
            self._release()
            raise ValueError(
                f"calibrl: the row's opening {shown[:60]!r} is not the served episode's {opening[:60]!r} (user {user}): "
                "if the row was logged with another user, serve a calibrl that takes the row's opening (logged_user); "
                "else the server holds other data or another calibrl version"
            )
        return None

    def reply(self, message: str) -> str:
        """Send your message to the user and return what the user says back.

        Args:
            message: what you say to the user: a question, or your final answer.
        """
        if self._done or self._ep is None:
            return "(The user has left the conversation.)"
        r = self._ep.turn(message)
        self._reward, self._done = float(r["reward"]), r["done"]
        return turn_text(r)

    def _finish(self) -> float:
        """The rollout's reward; releases its episode."""
        self._release()
        return self._reward

    def _release(self):
        if self._ep is not None:
            ep, self._ep = self._ep, None
            ep.delete()


class CalibrlEnv(_Episode):
    """For TRL >= 1.8 (environment_factory=CalibrlEnv): owns the reward."""

    def get_reward(self) -> float:
        return self._finish()


class LegacyCalibrlEnv(_Episode):
    """For TRL 0.29 to 1.7: no get_reward (it would be a tool); pass
    reward_funcs=[calibrl_trl.reward]."""


def reward(environments, **kwargs):
    """TRL reward function (reward_funcs=[reward]): each rollout's episode reward."""
    return [e._finish() for e in environments]
