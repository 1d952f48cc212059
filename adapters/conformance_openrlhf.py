"""OpenRLHF as it drives calibrl_openrlhf.py, replayed in plain Python.

A stand-in written from OpenRLHF at 3c3be62 (OpenRLHF/OpenRLHF,
2026-08-13, the newest snapshot; the agent flag is --train.agent_func_path),
not a copy:
  - openrlhf/utils/agent.py: AgentExecutorBase (abstract execute),
    AgentInstanceBase (abstract __init__ and step, reset returns states),
    MultiTurnAgentExecutor.execute: one AgentInstance() per sample,
    reset({"observation", "label"}), the observation tokenized and, when
    longer than max_length less sampling_params.max_tokens (or 1), cut to
    its last tokens and decoded again; then generate / step until done or
    the token budget (max_length) is spent, total_reward +=
    step_result["rewards"].item(), scores = step_result.get("scores",
    total_reward), the feedback text tokenized and appended, action
    ranges recorded for the loss mask, sampling_params replaced by the
    step's when it returns one;
  - openrlhf/trainer/ray/vllm_engine.py: _load_agent_executor loads the
    file by path as "agent_module", AgentExecutor must subclass
    AgentExecutorBase and is built with no arguments; generate_responses
    runs num_samples executes of one prompt at once (asyncio.gather), all
    with the same sampling_params object, which each mutates;
  - openrlhf/datasets/prompts_dataset.py preprocess_data: the prompt is
    data[input_key] (its "<image>" tags made content parts) rendered with
    apply_chat_template(..., add_generation_prompt=True), the label
    data[label_key];
  - openrlhf/trainer/ppo_utils/samples_generator.py
    _process_response_into_experience: torch.tensor([reward]),
    torch.tensor([scores]), and extra_logs values made tensors (a tensor
    value by .flatten()[0].item()).
torch is stood in by a minimal tensor when it is not installed; the
tokenizer by a character-level one with a ChatML template (Qwen2.5's
layout, default system message included).
"""

import abc
import asyncio
import importlib.util
import re
import sys
import types
from copy import deepcopy


class Tensor:
    """The part of torch.Tensor OpenRLHF uses on what the agent returns."""

    def __init__(self, data):
        self.data = data

    def item(self):
        if isinstance(self.data, list):
            if len(self.data) != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return Tensor(self.data[0]).item()
        return self.data.item() if isinstance(self.data, Tensor) else self.data

    def tolist(self):
        return [x.tolist() if isinstance(x, Tensor) else x for x in self.data] if isinstance(self.data, list) else self.data

    def __getitem__(self, i):
        return Tensor(self.data[i]) if isinstance(self.data[i], list) else self.data[i]

    def flatten(self):
        return Tensor(self.tolist() if isinstance(self.data, list) else [self.data])


def tensor(data, dtype=None):
    if isinstance(data, list):
        return Tensor([x.item() if isinstance(x, Tensor) else float(x) if isinstance(x, bool) else x for x in data])
    if isinstance(data, Tensor):
        return data
    if not isinstance(data, (int, float, bool)):
        raise TypeError(f"tensor(): cannot make a tensor of {type(data).__name__}")
    return Tensor(data)


class AgentExecutorBase(abc.ABC):
    @abc.abstractmethod
    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        raise NotImplementedError


class AgentInstanceBase(abc.ABC):
    @abc.abstractmethod
    def __init__(self, *args, **kwargs):
        pass

    async def reset(self, states, **kwargs):
        return states

    @abc.abstractmethod
    async def step(self, state_dict, **kwargs):
        raise NotImplementedError


class MultiTurnAgentExecutor(AgentExecutorBase):
    def __init__(self, agent_instance_cls):
        assert issubclass(agent_instance_cls, AgentInstanceBase), "AgentInstance must inherit from AgentInstanceBase"
        self.agent_instance_cls = agent_instance_cls

    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        agent = self.agent_instance_cls()
        reset = await agent.reset({"observation": prompt, "label": label})
        observation_text = reset["observation"]
        tokens = hf_tokenizer(text=observation_text, add_special_tokens=False, return_tensors="pt")["input_ids"][0].tolist()
        max_initial = max_length - (getattr(sampling_params, "max_tokens", None) or 1)
        if len(tokens) > max_initial:
            tokens = tokens[-max_initial:]
            observation_text = hf_tokenizer.decode(tokens, skip_special_tokens=False)
        action_ranges, total_reward, final_scores, extra_logs = [], 0, 0, {}
        while True:
            sampling_params.max_tokens = max_length - len(tokens)
            if sampling_params.max_tokens <= 0:
                break
            out = (await llm_engine.generate(tokens, deepcopy(sampling_params), multi_modal_data=None)).outputs[0]
            action_ranges.append((len(tokens), len(tokens) + len(out.token_ids)))
            step = await agent.step({"observation_text": observation_text, "action_text": out.text, "label": label, "sampling_params": sampling_params})
            total_reward += step["rewards"].item()
            final_scores = step.get("scores", total_reward)
            feedback = step["environment_feedback"]
            done = step["done"]
            extra_logs = step.get("extra_logs", {})
            feedback_tokens = hf_tokenizer(text=feedback, add_special_tokens=False, return_tensors="pt")["input_ids"][0].tolist()
            observation_text = observation_text + out.text + feedback
            tokens = tokens + list(out.token_ids) + feedback_tokens
            if step.get("sampling_params", None):
                sampling_params = step["sampling_params"]
            if done:
                break
        return {"prompt": prompt, "label": label, "reward": total_reward, "scores": final_scores, "observation_tokens": tokens,
                "action_ranges": action_ranges, "extra_logs": extra_logs, "observation_text": observation_text}


async def generate_responses(executor, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, num_samples):
    """vllm_engine's generate_responses: num_samples executes of one prompt
    at once, sharing sampling_params."""
    return await asyncio.gather(*[
        executor.execute(prompt=prompt, label=label, sampling_params=sampling_params, max_length=max_length,
                         hf_tokenizer=hf_tokenizer, llm_engine=llm_engine, images=None)
        for _ in range(num_samples)])


def experience_info(response):
    """_process_response_into_experience's reward fields."""
    info = {"reward": tensor([response["reward"]]), "score": tensor([response["scores"]])}
    for key, value in response["extra_logs"].items():
        if isinstance(value, Tensor):
            value = value.flatten()[0]
            value = value.item() if isinstance(value, Tensor) else value
        info[key] = tensor([value])
    return info


def install():
    """Puts the stand-in modules where the adapter imports them (and torch,
    when the real one is not installed)."""
    for name in ("openrlhf", "openrlhf.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    agent = types.ModuleType("openrlhf.utils.agent")
    agent.AgentExecutorBase, agent.AgentInstanceBase, agent.MultiTurnAgentExecutor = AgentExecutorBase, AgentInstanceBase, MultiTurnAgentExecutor
    sys.modules["openrlhf.utils.agent"] = agent
    try:
        import torch  # noqa: F401
    except ImportError:
        t = types.ModuleType("torch")
        t.tensor, t.Tensor = tensor, Tensor
        sys.modules["torch"] = t


def load_agent_module(path):
    """The first half of vllm_engine._load_agent_executor."""
    assert path.endswith(".py"), "Agent path must be a Python file"
    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_agent_executor(module):
    """The rest: the checks and the construction."""
    assert hasattr(module, "AgentExecutor"), "Agent module must contain AgentExecutor class"
    assert issubclass(module.AgentExecutor, AgentExecutorBase), "AgentExecutor must inherit from AgentExecutorBase"
    return module.AgentExecutor()


class ChatMLTokenizer:
    """A character-level tokenizer with Qwen2.5's chat layout."""

    name_or_path = "standin/chatml"
    chat_template = "chatml"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        out = ""
        if not messages or messages[0]["role"] != "system":
            out += "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        for m in messages:
            out += f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n"
        if add_generation_prompt:
            out += "<|im_start|>assistant\n"
        return out

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        return {"input_ids": Tensor([[ord(c) for c in text]])}

    def decode(self, ids, skip_special_tokens=False):
        return "".join(chr(i) for i in ids)


def parse_chatml(text):
    """The messages of a ChatML text (every turn closed)."""
    return [{"role": r, "content": c} for r, c in re.findall(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>\n?", text, re.S)]


def _content(text):
    """A string with "<image>" tags as content parts (prompts_dataset's
    _str_to_content_list); other strings as they are."""
    if "<image>" not in text:
        return text
    out = []
    for i, part in enumerate(text.split("<image>")):
        if i > 0:
            out.append({"type": "image"})
        if part.strip():
            out.append({"type": "text", "text": part.strip()})
    return out


def preprocess_data(data, input_key, label_key, tokenizer):
    """prompts_dataset.preprocess_data with --data.apply_chat_template."""
    chat = data[input_key]
    if isinstance(chat, str):
        chat = [{"role": "user", "content": _content(chat)}]
    else:
        chat = [{**m, "content": _content(m["content"])} if isinstance(m.get("content"), str) else m for m in deepcopy(chat)]
    prompt = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    label = "" if label_key is None else data[label_key]
    return prompt, label


class SamplingParams:
    def __init__(self):
        self.max_tokens, self.logprobs = None, None


class Engine:
    """vLLM behind llm_engine.generate: model(text) is the completion."""

    def __init__(self, model, tokenizer):
        self.model, self.tok = model, tokenizer

    async def generate(self, tokens, sampling_params, multi_modal_data=None):
        text = self.model(self.tok.decode(tokens))
        ids = self.tok(text=text)["input_ids"][0].tolist()
        return types.SimpleNamespace(outputs=[types.SimpleNamespace(token_ids=ids, text=text, logprobs=None)])
