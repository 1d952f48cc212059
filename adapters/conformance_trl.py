"""TRL's GRPOTrainer as it drives calibrl_trl.py, replayed in plain Python.

A stand-in written from trl/trainer/grpo_trainer.py (huggingface/trl), not
a copy, in its two generations:
  - "1.8": f2cd577 (2026-07-24, the newest snapshot; and v1.8.0, v1.9.0):
    GRPOTrainer.__init__ probes one instance per environment
    (inspect.getmembers, predicate ismethod): reset is required, get_reward
    makes the environment a reward source (called with no argument, once
    per rollout, from a reward function that receives environments=, for
    instances of exactly that class), every other public method is a tool.
    The probed instance seeds a pool: _generate_and_score_completions
    hands each row of a batch a pooled instance (growing the pool only
    when a batch needs more), so an instance is reset again for a later
    batch's row, after the reward of its last rollout was read. A row's
    prompt is optional with an environment: the prompt is then one empty
    user message, and reset is called with the row as it is (prompt
    absent). reset(**row) returns None or text appended to the content of
    the prompt's last message. _tool_call_loop appends the assistant's
    tool-calling message, calls each tool call of type "function" with
    its function's parsed arguments as keywords, and appends
    {"role": "tool", "name", "content": str(result)} (an exception, an
    unknown tool or another call type becomes {"error": ...}), until the
    model answers without a tool call or max_tool_calling_iterations
    (default None: no limit) is reached.
  - "0.29": v0.29.0 to v1.7.1: the same, except that every public method
    but reset is a tool, get_reward included, and the reward comes only
    from reward_funcs, which receive environments=.
A tool's schema is built from its docstring (transformers'
get_json_schema): a tool without one is refused, as there.
"""

import inspect


def tools_of(env, version):
    skip = ("reset", "get_reward") if version == "1.8" else ("reset",)
    tools = {}
    for name, member in inspect.getmembers(env, predicate=inspect.ismethod):
        if name in skip or name.startswith("_"):
            continue
        if not inspect.getdoc(member):
            raise ValueError(f"Cannot generate JSON schema for {name} because it has no docstring!")
        tools[name] = member
    return tools


def probe(factory, version, reward_funcs):
    """GRPOTrainer.__init__'s checks; returns the reward functions in use."""
    env = factory()
    members = dict(inspect.getmembers(env, predicate=inspect.ismethod))
    if "reset" not in members:
        raise ValueError("Each environment instance returned by `environment_factory` must define a callable `reset`.")
    tools_of(env, version)
    funcs = list(reward_funcs)
    if version == "1.8" and "get_reward" in members:
        env_type = type(env)

        def get_reward(environments, **kwargs):
            return [e.get_reward() if type(e) is env_type else None for e in environments]

        funcs.append(get_reward)
    if not funcs:
        raise ValueError("No reward source provided. Pass `reward_funcs`, or an `environment_factory` whose environment defines a `get_reward` method.")
    return funcs


def tool_call(name, arguments):
    """A tool call as TRL's response parser hands it to the loop."""
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def reset_row(env, row):
    """_generate_and_score_completions' reset of one row: the prompt (one
    empty user message when the row has none) with what reset returns
    appended to its last message's content."""
    prompt = [dict(m) for m in row.get("prompt", [{"role": "user", "content": ""}])]
    observation = env.reset(**row)
    if observation is not None:
        prompt = prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + observation}]
    return prompt


def tool_loop(env, prompt, model, version, max_tool_calling_iterations=None):
    """Generation with tool calls from prompt. model(messages, tool names)
    returns {"content": str} or {"content", "tool_calls": [tool_call(...)]}.
    Returns the conversation as the model last saw it."""
    tools = tools_of(env, version)
    messages = list(prompt)
    out = model(messages, sorted(tools))
    iterations = 0
    while out.get("tool_calls") and (max_tool_calling_iterations is None or iterations < max_tool_calling_iterations):
        messages.append({"role": "assistant", "content": out.get("content", ""), "tool_calls": out["tool_calls"]})
        for call in out["tool_calls"]:
            if call.get("type") != "function":
                name, result = call.get("name", "unknown"), {"error": f"Unsupported tool call type: {call.get('type')}"}
            else:
                name = call["function"]["name"]
                try:
                    if name not in tools:
                        raise ValueError(f"Tool {name} not found.")
                    result = tools[name](**call["function"]["arguments"])
                except Exception as e:  # as TRL: the model reads the error
                    result = {"error": str(e)}
            messages.append({"role": "tool", "name": name, "content": result if isinstance(result, list) else str(result)})
        out = model(messages, sorted(tools))
        iterations += 1
    messages.append({"role": "assistant", "content": out.get("content", "")})
    return messages


def rollout(env, row, model, version, max_tool_calling_iterations=None):
    """One rollout on env: reset, then generation with tool calls."""
    return tool_loop(env, reset_row(env, row), model, version, max_tool_calling_iterations)


class Trainer:
    """GRPOTrainer's environment handling across batches: the probe, the
    pool of instances reused from batch to batch, the resets, the tool
    loops and the rewards (summed over reward functions, weight 1)."""

    def __init__(self, factory, version, reward_funcs=(), max_tool_calling_iterations=None):
        self.factory, self.version, self.max_iter = factory, version, max_tool_calling_iterations
        self.funcs = probe(factory, version, reward_funcs)
        self.pool = [factory()]

    def step(self, rows, model):
        """One batch: returns each rollout's conversation and reward."""
        while len(self.pool) < len(rows):
            self.pool.append(self.factory())
        envs = self.pool[: len(rows)]
        prompts = [reset_row(env, row) for env, row in zip(envs, rows)]
        convs = [tool_loop(env, p, model, self.version, self.max_iter) for env, p in zip(envs, prompts)]
        return convs, rewards(self.funcs, envs, prompts, [c[len(p):] for c, p in zip(convs, prompts)])


def rewards(funcs, environments, prompts, completions):
    """_calculate_rewards: the sum over reward functions (weights 1), None
    counted as missing."""
    total = [0.0] * len(environments)
    for f in funcs:
        got = f(prompts=prompts, completions=completions, completion_ids=[None] * len(environments), environments=environments)
        for i, r in enumerate(got):
            if r is not None:
                total[i] += float(r)
    return total
