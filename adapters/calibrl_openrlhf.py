"""calibrl's environment as an OpenRLHF agent (--agent_func_path).

The dataset's label column holds the row's interaction_kwargs as JSON
(`calibrl export --kind prompts`, extra_info.interaction_kwargs). reset
opens that episode on `calibrl serve`; each step sends the model's action
and returns the user's reply as environment feedback, with the reward
(0 until the episode ends) under the keys OpenRLHF's agent_func example
returns.
"""

import json
import os
from typing import Any, Dict

from openrlhf.utils.agent import AgentExecutorBase, AgentInstanceBase

from calibrl_client import Client

_client = Client(os.environ.get("CALIBRL_URL", "http://127.0.0.1:8080"))
_user = os.environ.get("CALIBRL_USER", "human")


class AgentInstance(AgentInstanceBase):
    def __init__(self, *args, **kwargs):
        self.episode = None

    async def reset(self, states: dict, **kwargs):
        kw = json.loads(states["label"]) if isinstance(states.get("label"), str) else dict(states.get("label") or {})
        ep = _client.create(kw.pop("user", _user), **kw)
        self.episode = ep["id"]
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs) -> Dict[str, Any]:
        r = _client.turn(self.episode, states["action_text"])
        feedback = "" if r["done"] else "\n\nUser: " + r["reply"] + "\n\nAssistant: "
        return {
            "rewards": r["reward"],
            "scores": r["reward"],
            "environment_feedback": feedback,
            "done": r["done"],
            "sampling_params": states.get("sampling_params", None),
            "extra_logs": {"turn": r["info"]["turn"], "success": float(r["info"]["success"])},
        }


class AgentExecutor(AgentExecutorBase):
    def __init__(self, max_steps, max_length, llm_engine, hf_tokenizer, result_queue):
        super().__init__(AgentInstance, max_steps, max_length, llm_engine, hf_tokenizer, result_queue)
