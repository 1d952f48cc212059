"""calibrl's environment for TRL's GRPOTrainer(environment_factory=...).

Written against TRL at f2cd577 (huggingface/trl, 2026; released as 1.8 and
later) and its tags v0.29.0 to v1.7.1, trl/trainer/grpo_trainer.py:

  - TRL calls reset(**row) with every column of the dataset row, and
    appends what it returns to the content of the prompt's last message.
    Rows of `calibrl export --kind prompts` already end with the user's
    opening, so reset checks that the served episode opens with exactly
    that message and returns None (nothing appended). A row without the
    opening (a prompt of the instructions alone, or none: TRL >= 1.8 then
    starts from an empty user message) gets it from reset.
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
"""

from calibrl_client import Client, episode_kwargs, turn_text


class _Episode:
    """One rollout's episode on the service; TRL reuses the instance,
    calling reset before each rollout."""

    def __init__(self, base_url="http://127.0.0.1:8080", user="human", token_env="CALIBRL_TOKEN"):
        self._client = Client(base_url, token_env=token_env)
        self._user = user
        self._id = None
        self._reward = 0.0
        self._done = False

    def reset(self, **kwargs):
        """Opens the row's episode; returns the opening only when the row's
        prompt does not already end with it."""
        self._release()
        kw = episode_kwargs(kwargs)
        ep = self._client.create(kw.pop("user", self._user), **kw)
        self._id, self._reward, self._done = ep["id"], 0.0, False
        opening = ep["observation"]["messages"][0]["content"]
        prompt = kwargs.get("prompt")
        if isinstance(prompt, list) and prompt and prompt[-1].get("role") == "user" and prompt[-1].get("content"):
            if prompt[-1]["content"] != opening:
                self._release()
                raise ValueError(
                    f"calibrl: the row's opening {prompt[-1]['content'][:60]!r} is not the served episode's "
                    f"{opening[:60]!r}: the server holds other data or another calibrl version"
                )
            return None
        return opening

    def reply(self, message: str) -> str:
        """Send your message to the user and return what the user says back.

        Args:
            message: what you say to the user: a question, or your final answer.
        """
        if self._done or self._id is None:
            return "(The user has left the conversation.)"
        r = self._client.turn(self._id, message)
        self._reward, self._done = float(r["reward"]), r["done"]
        return turn_text(r)

    def _finish(self) -> float:
        """The rollout's reward; releases its episode."""
        self._release()
        return self._reward

    def _release(self):
        if self._id is not None:
            self._client.delete(self._id)
            self._id = None


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
