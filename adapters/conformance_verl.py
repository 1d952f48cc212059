"""verl before 0.8 as it drives calibrl_verl_v07.py, replayed in plain Python.

A stand-in written from verl at b178a3c (volcengine/verl), not a copy:
  - verl/interactions/base.py BaseInteraction (constructor and defaults);
  - verl/interactions/utils/interaction_registry.py get_interaction_class
    and initialize_interactions_from_config (class_name imported by module
    name, config["name"] injected, one instance per name);
  - verl/experimental/agent_loop/tool_agent_loop.py ToolAgentLoop.run and
    its _handle_generating_state / _handle_interacting_state: the call
    order, the termination checks before the interaction is asked, one
    user message appended per reply, turn_scores, the response mask;
  - verl/trainer/ppo/reward.py get_custom_reward_fn (load_extern_object by
    path and name, reward_kwargs merged) and
    verl/experimental/reward_loop/reward_manager/naive.py
    NaiveRewardManager.run_single (extra_info updated with the agent loop's
    extra fields, compute_score called with keywords);
  - verl/utils/reward_score/__init__.py default_compute_score, which
    raises NotImplementedError for a data_source it does not know.
"""

import importlib.util
import os
import re
import sys
import types
from uuid import uuid4


class BaseInteraction:
    # verl/interactions/base.py
    def __init__(self, config):
        self.config = config
        self.name = config.get("name", "interaction_agent")

    async def start_interaction(self, instance_id=None, **kwargs):
        return str(uuid4()) if instance_id is None else instance_id

    async def generate_response(self, instance_id, messages, **kwargs):
        return False, "Your current result seems acceptable.", 0.8, {}

    async def calculate_score(self):
        return 0.0

    async def finalize_interaction(self):
        pass


# The data sources default_compute_score knows (verl/utils/reward_score/__init__.py).
KNOWN_SOURCES = ("openai/gsm8k", "lighteval/MATH", "math_dapo", "math", "hiyouga/geometry3k", "codecontests")
default_calls = []


def default_compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    if data_source not in KNOWN_SOURCES and not data_source.startswith("aime"):
        raise NotImplementedError(f"Reward function is not implemented for {data_source=}")
    default_calls.append(data_source)
    return 1.0 if ground_truth in solution_str else 0.0


def install():
    """Puts the stand-in modules where the adapter imports them."""
    for name in ("verl", "verl.interactions", "verl.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    base = types.ModuleType("verl.interactions.base")
    base.BaseInteraction = BaseInteraction
    sys.modules["verl.interactions.base"] = base
    rs = types.ModuleType("verl.utils.reward_score")
    rs.default_compute_score = default_compute_score
    sys.modules["verl.utils.reward_score"] = rs


def _scalar(v):
    """A YAML scalar as OmegaConf gives it, ${oc.env:VAR,default} resolved."""
    env = re.fullmatch(r"\$\{oc\.env:(\w+),(.*)\}", v)
    if env:
        return os.environ.get(env.group(1), env.group(2).strip().strip('"'))
    if v[:1] in "\"'":
        return v[1:-1]
    if re.fullmatch(r"-?\d+", v):
        return int(v)
    if re.fullmatch(r"-?\d+\.\d*", v):
        return float(v)
    return v


def load_interaction_config(path):
    """multi_turn.interaction_config_path as verl reads it (OmegaConf.load,
    then its "interaction" list): the items [{name, class_name, config}].
    Only the file's shape is read: a list of mappings under "interaction",
    each with a "config" mapping of scalars."""
    items, cur, in_config = [], None, False
    with open(path) as f:
        for no, line in enumerate(f, 1):
            body = line.split(" #", 1)[0].rstrip()
            if not body.strip() or body.lstrip().startswith("#"):
                continue
            if body == "interaction:":
                continue
            m = re.match(r"^(\s*)(- )?(\w+):\s*(.*)$", body)
            if not m:
                raise ValueError(f"{path}:{no}: not a `key: value` line: {line.rstrip()!r}")
            indent, dash, key, value = len(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
            if dash:
                cur, in_config = {}, False
                items.append(cur)
            elif cur is None:
                raise ValueError(f"{path}:{no}: {key} before the first interaction")
            if key == "config" and not value:
                cur["config"], in_config = {}, True
            elif in_config and indent > 4:
                cur["config"][key] = _scalar(value)
            else:
                cur[key], in_config = _scalar(value), False
    return items


def interaction_from_config(items):
    """initialize_interactions_from_config on parsed items [{name, class_name, config}]."""
    out = {}
    for item in items:
        module_name, class_name = item["class_name"].rsplit(".", 1)
        if module_name in sys.modules:
            module = sys.modules[module_name]
        else:
            spec = importlib.util.find_spec(module_name)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        config = dict(item.get("config") or {})
        name = item.get("name") or class_name.lower()
        config["name"] = name
        inter = getattr(module, class_name)(config=config)
        if not isinstance(inter, BaseInteraction):
            raise TypeError(f"{item['class_name']} is not a BaseInteraction")
        out[name] = inter
    return out


def custom_reward_fn(path, name, reward_kwargs=None):
    """get_custom_reward_fn: None when the file is absent (verl then uses
    default_compute_score)."""
    if not path or not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise AttributeError(f"Object not found in module: {name=}, {path=}.")
    raw = getattr(module, name)
    extra = dict(reward_kwargs or {})
    return lambda *a, **kw: raw(*a, **{**kw, **extra})


async def run_tool_agent_loop(interaction_map, row, model, max_assistant_turns=None, max_user_turns=None, response_length=1 << 20):
    """ToolAgentLoop.run with interactions and no tools. model(messages)
    returns the assistant's text; tokens are counted as characters.
    Returns (messages, turn_scores, response_mask, num_turns)."""
    messages = list(row["prompt"])
    request_id = uuid4().hex
    interaction_kwargs = row["extra_info"]["interaction_kwargs"]
    if "name" not in interaction_kwargs:
        raise ValueError("'name' key is required in interaction_kwargs")
    interaction = interaction_map[interaction_kwargs["name"]]
    await interaction.start_interaction(request_id, **interaction_kwargs)
    turn_scores, mask = [], []
    assistant_turns = user_turns = 0
    while True:
        text = model(messages)
        assistant_turns += 1
        mask += [1] * len(text)
        if len(mask) >= response_length:
            break
        if max_assistant_turns and assistant_turns >= max_assistant_turns:
            break
        if max_user_turns and user_turns >= max_user_turns:
            break
        messages.append({"role": "assistant", "content": text})
        out = await interaction.generate_response(request_id, messages, **interaction_kwargs)
        if not (isinstance(out, tuple) and len(out) == 4):
            raise TypeError(f"generate_response returned {type(out).__name__}, want (terminate, content, score, metrics)")
        terminate, content, reward, metrics = out
        if not isinstance(content, str) or not isinstance(metrics, dict):
            raise TypeError(f"generate_response content {type(content).__name__}, metrics {type(metrics).__name__}")
        user_turns += 1
        messages.append({"role": "user", "content": content})
        if reward is not None:
            turn_scores.append(reward)
        mask += [0] * len(content)
        if terminate:
            break
    return messages, turn_scores, mask, user_turns + assistant_turns + 1


def reward_loop_score(row, turn_scores, num_turns, compute_score, solution_str):
    """NaiveRewardManager.run_single: the score of one finished rollout."""
    extra_info = dict(row.get("extra_info") or {})
    extra_info.update({"turn_scores": turn_scores, "tool_rewards": [], "raw_prompt": row["prompt"]}.items())
    extra_info["num_turns"] = num_turns
    extra_info["rollout_reward_scores"] = {}
    fn = compute_score or default_compute_score
    result = fn(data_source=row["data_source"], solution_str=solution_str, ground_truth=row["reward_model"]["ground_truth"], extra_info=extra_info)
    return result["score"] if isinstance(result, dict) else result
