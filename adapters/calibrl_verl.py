"""calibrl's environment as a verl Interaction (multi-turn rollout).

Each dataset row from `calibrl export --kind prompts --format parquet`
carries extra_info.interaction_kwargs (name "calibrl", the full task name
with its level, split, index, sample, episode_seed, max_turns); verl passes
them to start_interaction, which opens the same episode on `calibrl serve`.
Every assistant turn goes to the server; the user's reply comes back as
the next user message, and the reward (0 until the episode ends, then the
task's score) as the turn score.

Use with calibrl_verl.yaml as actor_rollout_ref.rollout.multi_turn.
interaction_config_path; put this file and calibrl_client.py on
PYTHONPATH. Signatures follow verl/interactions/base.py.
"""

import asyncio
import uuid
from typing import Any, Optional

from verl.interactions.base import BaseInteraction

from calibrl_client import Client


class CalibrlInteraction(BaseInteraction):
    def __init__(self, config: dict):
        super().__init__(config)
        self.client = Client(config.get("base_url", "http://127.0.0.1:8080"), token_env=config.get("token_env", "CALIBRL_TOKEN"))
        self.user = config.get("user", "human")
        self._instance_dict = {}

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs) -> str:
        if instance_id is None:
            instance_id = str(uuid.uuid4())
        ep = await asyncio.to_thread(self.client.create, kwargs.pop("user", self.user), **kwargs)
        self._instance_dict[instance_id] = {"id": ep["id"], "observation": ep["observation"], "reward": 0.0, "done": False}
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs) -> tuple[bool, str, float, dict[str, Any]]:
        st = self._instance_dict[instance_id]
        content = ""
        for m in reversed(messages):
            if m.get("role") == "assistant":
                content = m.get("content") or ""
                break
        r = await asyncio.to_thread(self.client.turn, st["id"], content)
        st["reward"], st["done"] = r["reward"], r["done"]
        return r["done"], r["reply"], r["reward"], r["info"]

    async def calculate_score(self, instance_id: Optional[str] = None, **kwargs) -> float:
        return self._instance_dict[instance_id]["reward"]

    async def finalize_interaction(self, instance_id: Optional[str] = None, **kwargs) -> None:
        st = self._instance_dict.pop(instance_id, None)
        if st is not None:
            await asyncio.to_thread(self.client.delete, st["id"])
