"""calibrl's environment as an OpenRLHF agent (--train.agent_func_path).

Written against OpenRLHF at 3c3be62 (OpenRLHF/OpenRLHF, 2026),
openrlhf/utils/agent.py and openrlhf/trainer/ray/vllm_engine.py:

  - OpenRLHF loads this file by path and builds AgentExecutor() with no
    arguments; it must subclass AgentExecutorBase. MultiTurnAgentExecutor
    (the current API: AgentExecutorBase itself is abstract) builds one
    AgentInstance() per sample and calls reset({"observation": prompt,
    "label": label}), then step({...,"action_text", "label", ...}) after
    each generation until done or the token budget is spent.
  - The prompt is the row's `prompt` column rendered with the model's chat
    template (--data.input_key prompt --data.apply_chat_template), the
    label is the row's `label` column (--data.label_key label): the
    interaction kwargs as JSON, which `calibrl export --kind prompts` writes.
  - step's "rewards" must be a tensor: the executor sums
    step_result["rewards"].item(). It is 0 until the episode ends, then the
    task's reward, so the sum is the episode's reward.
  - environment_feedback is raw text appended to the token stream: the
    user's reply, with the environment's notes as system messages where
    calibrl puts them (calibrl_client.turn_messages), rendered with the
    tokenizer's chat template, then the next assistant header. The chat
    template must accept system messages after the first (Qwen2.5 and
    Llama 3 do).
  - HTTP runs in a worker thread (asyncio.to_thread): the executor runs
    every sample of a vLLM engine on one event loop.
  - The executor stops calling step when the sequence reaches --max_len;
    AgentExecutor.execute then releases the episode on the server.
  - The label carries the row's opening and logged_user: the server
    opens the episode with that opening when the training user
    (CALIBRL_USER) is another, and refuses it naming the cause when the
    same user opens otherwise.
  - CALIBRL_URL may name several serve replicas (comma-separated): each
    turn carries the conversation, and a turn whose replica is gone goes
    to the next one (calibrl_client.Episode).

torch is imported unconditionally: OpenRLHF depends on it and calls
.item() on the reward, so there is no setting where a fallback type would
run. CALIBRL_URL, CALIBRL_USER and CALIBRL_TOKEN (bearer token) configure
the server.
"""

import asyncio
import contextvars
import os
import sys
from typing import Any, Dict

import torch

from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

# OpenRLHF loads this file by path, not as a package: calibrl_client.py
# beside it must be importable without PYTHONPATH.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from calibrl_client import Client, Episode, episode_kwargs, turn_messages  # noqa: E402

_client = Client(os.environ.get("CALIBRL_URL", "http://127.0.0.1:8080"))
_user = os.environ.get("CALIBRL_USER", "human")

# The execute call in progress: its tokenizer and the instances it built,
# so that instances render with the model's chat template and execute
# releases their episodes however the rollout ended.
_rollout = contextvars.ContextVar("calibrl_rollout")


class _Template:
    """The model's chat template, used to render what follows an agent turn."""

    # Placeholders no real message holds.
    SYS, USER, ASSISTANT = "\x00calibrl-system\x00", "\x00calibrl-user\x00", "\x00calibrl-assistant\x00"

    def __init__(self, tokenizer):
        self.tok = tokenizer
        self.base = [{"role": "system", "content": self.SYS}, {"role": "user", "content": self.USER}, {"role": "assistant", "content": self.ASSISTANT}]
        text = self._render(self.base, False)
        # What the template writes after an assistant message's content:
        # the end of the turn the model may or may not have generated.
        self.closer = text[text.index(self.ASSISTANT) + len(self.ASSISTANT) :]

    def _render(self, messages, generation_prompt):
        return self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt)

    def after(self, action_text, messages, done):
        """The text after action_text: the end of the agent's turn (the part
        of it the model did not generate), the messages, and the next
        assistant header unless the episode is over."""
        k = len(self.closer)
        while k > 0 and not action_text.endswith(self.closer[:k]):
            k -= 1
        head = self._render(self.base, False)
        body = self._render(self.base + messages, not done)
        if not body.startswith(head):
            raise ValueError("calibrl: the chat template renders earlier turns differently once more follow; cannot append feedback")
        return self.closer[k:] + body[len(head) :]


class AgentInstance(AgentInstanceBase):
    def __init__(self, *args, **kwargs):
        self.episode = None
        self.done = False
        self.template = None
        rollout = _rollout.get(None)
        if rollout is not None:
            rollout["instances"].append(self)
            self.template = rollout["template"]

    async def reset(self, states: dict, **kwargs):
        kw = episode_kwargs(states.get("label"))
        user = kw.pop("user", _user)
        self.episode = await asyncio.to_thread(Episode, _client, user, kw, kw.get("opening"))
        self.done = False
        opening = self.episode.opening
        if opening not in states["observation"]:
            await self.release()
            if "logged_user" not in kw:
                raise ValueError(f"calibrl: the prompt does not hold the served episode's opening {opening[:60]!r} (user {user}): the label does not say "
                                 "which user logged the row (an older export): if it was another user, export the rows again with this calibrl; "
                                 "else the server holds other data or another calibrl version")
            raise ValueError(f"calibrl: the prompt does not hold the served episode's opening {opening[:60]!r}: the label is not the prompt's row "
                             "(pass --data.input_key prompt --data.label_key label of the same export)")
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs) -> Dict[str, Any]:
        r = await asyncio.to_thread(self.episode.turn, states["action_text"])
        self.done = r["done"]
        if self.done:
            await self.release()
        if self.template is None:
            raise RuntimeError("calibrl: AgentInstance outside calibrl's AgentExecutor: no chat template to render the reply with")
        reward = torch.tensor(float(r["reward"]))
        return {
            "rewards": reward,
            "scores": reward,
            "environment_feedback": self.template.after(states["action_text"], turn_messages(r), r["done"]),
            "done": r["done"],
            "sampling_params": states.get("sampling_params", None),
            "extra_logs": {"turn": float(r["info"]["turn"]), "success": float(r["info"]["success"])},
        }

    async def release(self):
        if self.episode is not None:
            episode, self.episode = self.episode, None
            await asyncio.to_thread(episode.delete)


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self):
        super().__init__(AgentInstance)
        self._templates = {}

    async def execute(self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None):
        # Ray hands each call its own copy of the tokenizer: key by template.
        key = (getattr(hf_tokenizer, "name_or_path", ""), str(getattr(hf_tokenizer, "chat_template", "")))
        if key not in self._templates:
            self._templates[key] = _Template(hf_tokenizer)
        rollout = {"template": self._templates[key], "instances": []}
        token = _rollout.set(rollout)
        try:
            return await super().execute(prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=images)
        finally:
            _rollout.reset(token)
            for inst in rollout["instances"]:
                await inst.release()
