"""calibrl's environment as a verl Interaction: for verl BEFORE 0.8 only.

verl 0.8 deleted verl/interactions (PR #6074, 2026-04-20), so this file
does not load there (No module named 'verl.interactions'): on verl 0.8 and
later use calibrl_verl_agent_loop.py and recipe/calibrl_agent_loop.

Written against verl at b178a3c (volcengine/verl, 2026): the interaction is
driven by verl/experimental/agent_loop/tool_agent_loop.py (ToolAgentLoop),
which builds one instance per interaction name and shares it across every
rollout of the worker. It calls start_interaction(request_id,
**interaction_kwargs) once per rollout, then after each assistant turn
generate_response(request_id, messages, **interaction_kwargs) and appends
what comes back as ONE user message; the score goes to the rollout's
turn_scores. It never calls calculate_score or finalize_interaction, and
it stops calling without a word when it hits max_assistant_turns,
max_user_turns or response_length.

So:
  - the user's reply comes back with the environment's notes around it
    (calibrl_client.turn_text), the only way they reach the policy here;
  - the turn score is 0 until the episode ends, then the task's reward,
    so sum(turn_scores) is the episode's reward: calibrl_verl_reward.py's
    compute_score (verl's custom_reward_function) returns exactly that;
  - the episode is deleted on the server on its last turn; a rollout verl
    cut short is released by the next start_interaction once it has been
    idle `release_after_s` (default 600 s), and the server's TTL is the
    last resort. Set max_assistant_turns above the rows' max_turns (the
    recipe does) so that verl never cuts an episode the server would end.

Each dataset row from `calibrl export --kind prompts --format parquet`
carries extra_info.interaction_kwargs (name "calibrl", the task's full
name, split, index, sample, episode_seed, max_turns), which open the same
episode on `calibrl serve`. Use with recipe/calibrl_verl_v07 (config YAML,
reward function and launch script); put this file and calibrl_client.py on
PYTHONPATH.
"""

import asyncio
import time
from typing import Any, Optional
from uuid import uuid4

from verl.interactions.base import BaseInteraction

from calibrl_client import Client, turn_text


class CalibrlInteraction(BaseInteraction):
    def __init__(self, config: dict):
        super().__init__(config)
        self.client = Client(config.get("base_url", "http://127.0.0.1:8080"), token_env=config.get("token_env", "CALIBRL_TOKEN"))
        self.user = config.get("user", "human")
        self.release_after_s = float(config.get("release_after_s", 600))
        self._instance_dict: dict[str, dict[str, Any]] = {}

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs) -> str:
        await self._release_idle()
        if instance_id is None:
            instance_id = str(uuid4())
        kwargs = dict(kwargs)
        ep = await asyncio.to_thread(self.client.create, kwargs.pop("user", self.user), **kwargs)
        self._instance_dict[instance_id] = {"id": ep["id"], "observation": ep["observation"], "reward": 0.0, "done": False, "used": time.monotonic()}
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs) -> tuple[bool, str, float, dict[str, Any]]:
        st = self._instance_dict[instance_id]
        st["used"] = time.monotonic()
        content = ""
        for m in reversed(messages):
            if m.get("role") == "assistant":
                content = m.get("content") or ""
                break
        # The whole list goes too, so that any replica can answer the turn.
        r = await asyncio.to_thread(self.client.turn, st["id"], content, messages)
        info = r["info"]
        metrics = {"turn": info["turn"], "success": float(info["success"])}
        if r["done"]:
            # verl stops calling after a terminating reply: release now.
            await self.finalize_interaction(instance_id)
        return r["done"], turn_text(r), float(r["reward"]), metrics

    async def calculate_score(self, instance_id: Optional[str] = None, **kwargs) -> float:
        """The reward so far of a live rollout (verl does not call it; the
        training reward is compute_score's, in calibrl_verl_reward.py)."""
        st = self._instance_dict.get(instance_id)
        return 0.0 if st is None else st["reward"]

    async def finalize_interaction(self, instance_id: Optional[str] = None, **kwargs) -> None:
        st = self._instance_dict.pop(instance_id, None)
        if st is not None:
            await asyncio.to_thread(self.client.delete, st["id"])

    async def _release_idle(self):
        """Releases the episodes of rollouts verl cut short (it says nothing
        when it does): those idle longer than release_after_s."""
        cutoff = time.monotonic() - self.release_after_s
        for iid in [i for i, st in self._instance_dict.items() if st["used"] < cutoff]:
            await self.finalize_interaction(iid)
