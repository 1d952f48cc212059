"""verl's agent loop as it drives calibrl_verl_agent_loop.py, replayed in plain Python.

A stand-in written from verl-project/verl at
1dda039b9c6311889a9c9a26040677e1254814f9 (2026-08-22, 0.10.0.dev; v0.8.0
where VERSION = "v0.8.0"), not a copy, and without torch: lists stand for
tensors.
  - verl/experimental/agent_loop/agent_loop.py: AgentLoopOutput and
    AgentLoopMetrics (pydantic models: the fields, their types, defaults);
    AgentLoopBase.__init__ (its keywords, rollout_config, the Continuous
    Token builder), ct_build_initial_tokens (prompt capped to
    prompt_length), ct_merge_assistant_token and ct_merge_non_assistant_msg;
    register and _agent_loop_registry; AgentLoopWorker: the registry filled
    from agent_loop_config_path, the sampling params it builds, agent_name
    from each row (default_agent_loop when the column is absent),
    hydra.utils.instantiate of the registry entry with the worker's
    keywords, `await run(sampling_params, **row)`, then
    _agent_loop_postprocess (raw_prompt into extra_fields; prompt padded
    left and response right with tokenizer.pad, which pads and never cuts;
    the response mask padded with the pad id, then multiplied by the
    response's attention mask; logprobs padded with zeros; the reward loop
    asked only when reward_score is None) and _postprocess (torch.cat of
    the rows, which needs equal widths; rm_scores at the last response
    token, float32, only when every row has a score; __num_turns__);
  - verl/utils/tokenizer/continuous_token.py: ContinuousTokenBuilder and
    QwenContinuousTokenBuilder (model_type "qwen2"): the initial render,
    appended user/system/tool messages tokenised as the suffix after a
    synthetic system+user prefix, the generation prompt as the suffix of
    a re-render, a newline inserted after <|im_end|>, and the mask/logprob
    alignment (assistant tokens 1, everything else 0);
  - verl/workers/rollout/llm_server.py LLMServerClient.generate and
    replica.py TokenOutput: token ids in and out, max_tokens pinned to
    response_length when absent, stop_reason "length" when the budget is
    used up;
  - verl/utils/dataset/rl_dataset.py RLHFDataset.__getitem__: the columns
    a row passes (raw_prompt, index, tools_kwargs and interaction_kwargs
    lifted from extra_info);
  - PR #6074 (2026-04-20): verl/interactions is gone, so nothing here
    provides verl.interactions.base.
At v0.8.0 (7aed6b2) AgentLoopBase had no ct_* methods: it had
apply_chat_template(messages, ..., remove_system_prompt) with the system
prompt found by initialize_system_prompt, and the tool loop appended
`apply_chat_template(new messages, remove_system_prompt=True)`.

The tokenizer is a stand-in too: Qwen2.5's ChatML template and special
ids, bytes as tokens, and a few merged pieces, so that re-encoding decoded
text gives other ids than the policy generated (verl's golden rule: never
re-encode tokens you decoded).
"""

import asyncio
import importlib
import inspect
import json
import os
import re
import struct
import sys
import types

COMMIT = "1dda039b9c6311889a9c9a26040677e1254814f9"
VERSION = "1dda039"  # or "v0.8.0": the AgentLoopBase of that release

# --- the tokenizer ------------------------------------------------------

PAD, IM_START, IM_END = 151643, 151644, 151645
SPECIAL = {"<|endoftext|>": PAD, "<|im_start|>": IM_START, "<|im_end|>": IM_END}
SPECIAL_BY_ID = {v: k for k, v in SPECIAL.items()}
# Merged pieces: ids 1000+k. encode() prefers them; the policy below
# generates bytes, so decode-then-encode is not the identity.
MERGES = ["the ", " the", "you", "ing", "\n\n", "er", "an", "What", "is ", "The ", "answer", "number", "ou", "at ", "e "]
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


class Tokenizer:
    pad_token_id = PAD
    eos_token_id = IM_END
    padding_side = "right"

    def encode(self, text, add_special_tokens=False):
        """Special tokens are read in text (as Qwen's tokenizer does), then
        the longest merged piece, else one byte."""
        ids, data, i = [], text.encode(), 0
        specials = [(k.encode(), v) for k, v in SPECIAL.items()]
        merges = sorted(((m.encode(), 1000 + k) for k, m in enumerate(MERGES)), key=lambda p: -len(p[0]))
        while i < len(data):
            for piece, tid in specials + merges:
                if data.startswith(piece, i):
                    ids.append(tid)
                    i += len(piece)
                    break
            else:
                ids.append(data[i])
                i += 1
        return ids

    def decode(self, ids, skip_special_tokens=False):
        out = b""
        for t in ids:
            t = int(t)
            if t in SPECIAL_BY_ID:
                if not skip_special_tokens:
                    out += SPECIAL_BY_ID[t].encode()
            elif 1000 <= t < 1000 + len(MERGES):
                out += MERGES[t - 1000].encode()
            elif 0 <= t < 256:
                out += bytes([t])
            else:
                raise ValueError(f"token id {t} is not in the vocabulary")
        return out.decode(errors="replace")

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False, tools=None, **kwargs):
        """Qwen2.5's template without tools: a default system message when
        the first is not one."""
        if tools:
            raise NotImplementedError("the stand-in tokenizer renders no tools")
        text = ""
        if not messages or messages[0].get("role") != "system":
            text += f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n"
        for m in messages:
            content = m.get("content")
            if not isinstance(content, str):
                raise TypeError(f"message content {type(content).__name__}, want str")
            text += f"<|im_start|>{m['role']}\n{content}<|im_end|>\n"
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return self.encode(text) if tokenize else text

    def pad(self, batch, padding="max_length", max_length=None, return_tensors=None, return_attention_mask=True):
        """tokenizer.pad on one sequence: pads to max_length on padding_side
        with the pad id, and never truncates."""
        ids = list(batch["input_ids"])
        n = max(0, max_length - len(ids))
        fill, ones = [self.pad_token_id] * n, [1] * len(ids)
        out = {"input_ids": fill + ids if self.padding_side == "left" else ids + fill}
        if return_attention_mask:
            out["attention_mask"] = [0] * n + ones if self.padding_side == "left" else ones + [0] * n
        return out


def parse_chatml(text):
    """The messages of a rendered prompt, and whether it ends with the
    generation prompt."""
    gen = text.endswith("<|im_start|>assistant\n")
    if gen:
        text = text[: -len("<|im_start|>assistant\n")]
    msgs = [{"role": r, "content": c} for r, c in re.findall(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>\n?", text, re.S)]
    return msgs, gen


# --- Continuous Token (QwenContinuousTokenBuilder) ----------------------

class MergeResult:
    def __init__(self, token_ids, appended_token_count, kind="non_assistant", inserted_token_ids=(), removed_prefix_token_count=0):
        self.token_ids, self.appended_token_count, self.kind = list(token_ids), appended_token_count, kind
        self.inserted_token_ids, self.removed_prefix_token_count = list(inserted_token_ids), removed_prefix_token_count


SYNTH_SYSTEM = {"role": "system", "content": "continuous token synthetic system"}
SYNTH_USER = {"role": "user", "content": "continuous token synthetic user"}


class QwenContinuousTokenBuilder:
    def __init__(self, tokenizer, chat_template_kwargs=None):
        self.tokenizer, self.kw = tokenizer, chat_template_kwargs or {}
        self.newline = tokenizer.encode("\n")[0]

    def _render(self, messages, add_generation_prompt, tools=None):
        return self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=add_generation_prompt, tools=tools, **self.kw)

    def build_initial_tokens(self, messages, tools=None, **mm):
        return self._render(messages, True, tools)

    def _delta(self, prefix, appended, add_generation_prompt=False, tools=None):
        p = self._render(prefix, False, tools)
        full = self._render(prefix + appended, add_generation_prompt, tools)
        if full[: len(p)] != p:
            raise ValueError(f"Continuous Token token-id suffix diff failed for roles: {[m.get('role') for m in appended] or ['generation_prompt']}")
        return full[len(p):]

    def merge_non_assistant_tokens(self, previous, updated, runtime_token_ids, tools=None):
        if len(updated) < len(previous) or updated[: len(previous)] != previous:
            raise ValueError("Continuous Token messages must be append-only; prefix messages changed")
        appended = updated[len(previous):]
        ids = []
        for m in appended:
            if m.get("role") not in ("tool", "user", "system"):
                raise ValueError(f"Continuous Token only supports appending roles ['system', 'tool', 'user'], got {m.get('role')!r}")
            if m["role"] == "tool":
                raise NotImplementedError("the stand-in appends no tool messages")
            ids += self._delta([SYNTH_SYSTEM, SYNTH_USER], [m], tools=tools)
        if appended:
            ids += self._delta(updated, [], add_generation_prompt=True, tools=tools)
        prefix, inserted = list(runtime_token_ids), []
        if prefix and prefix[-1] == IM_END:
            prefix.append(self.newline)
            inserted.append(self.newline)
        return MergeResult(prefix + ids, len(ids), "non_assistant", inserted)

    def merge_assistant_tokens(self, runtime_token_ids, assistant_token_ids):
        return MergeResult(list(runtime_token_ids) + list(assistant_token_ids), len(assistant_token_ids), "assistant")

    def align_response_metadata(self, merge, response_mask, response_logprobs=None, assistant_logprobs=None):
        mask = list(response_mask)
        lps = list(response_logprobs) if response_logprobs is not None else None
        if lps is None and assistant_logprobs is not None:
            raise ValueError("response_logprobs is required when assistant_logprobs is provided")
        mask += [0] * len(merge.inserted_token_ids)
        if lps is not None:
            lps += [0.0] * len(merge.inserted_token_ids)
        if merge.kind == "assistant":
            mask += [1] * merge.appended_token_count
            if lps is not None:
                assistant_logprobs = assistant_logprobs if assistant_logprobs is not None else []
                if len(assistant_logprobs) != merge.appended_token_count:
                    raise ValueError("assistant_logprobs length must match appended assistant token count")
                lps += list(assistant_logprobs)
        else:
            mask += [0] * merge.appended_token_count
            if lps is not None:
                lps += [0.0] * merge.appended_token_count
        return mask, lps


# --- pydantic models, as plain classes that validate like them ----------

def _int_list(name, v):
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise TypeError(f"AgentLoopOutput.{name}: want list[int], got {type(v).__name__} {str(v)[:60]}")
    return v


class AgentLoopMetrics:
    FIELDS = {"generate_sequences": 0.0, "tool_calls": 0.0, "compute_score": 0.0, "num_preempted": -1}

    def __init__(self, **kw):
        for k, d in self.FIELDS.items():  # other keys are ignored, as pydantic's default
            setattr(self, k, type(d)(kw.get(k, d)))

    def model_dump(self):
        return {k: getattr(self, k) for k in self.FIELDS}


class AgentLoopOutput:
    def __init__(self, *, prompt_ids, response_ids, response_mask, metrics, response_logprobs=None, routed_experts=None,
                 multi_modal_data=None, reward_score=None, num_turns=0, extra_fields=None, mm_processor_kwargs=None):
        self.prompt_ids = _int_list("prompt_ids", prompt_ids)
        self.response_ids = _int_list("response_ids", response_ids)
        self.response_mask = _int_list("response_mask", response_mask)
        if response_logprobs is not None and not all(isinstance(x, (int, float)) for x in response_logprobs):
            raise TypeError("AgentLoopOutput.response_logprobs: want list[float]")
        self.response_logprobs = None if response_logprobs is None else [float(x) for x in response_logprobs]
        if isinstance(metrics, dict):
            metrics = AgentLoopMetrics(**metrics)
        if not isinstance(metrics, AgentLoopMetrics):
            raise TypeError(f"AgentLoopOutput.metrics: want AgentLoopMetrics or dict, got {type(metrics).__name__}")
        self.metrics = metrics
        if reward_score is not None and (isinstance(reward_score, bool) or not isinstance(reward_score, (int, float))):
            raise TypeError(f"AgentLoopOutput.reward_score: want float, got {type(reward_score).__name__}")
        self.reward_score = None if reward_score is None else float(reward_score)
        if not isinstance(num_turns, int) or isinstance(num_turns, bool):
            raise TypeError(f"AgentLoopOutput.num_turns: want int, got {type(num_turns).__name__}")
        self.num_turns = num_turns
        self.routed_experts, self.multi_modal_data, self.mm_processor_kwargs = routed_experts, multi_modal_data, mm_processor_kwargs
        if extra_fields is not None and not isinstance(extra_fields, dict):
            raise TypeError("AgentLoopOutput.extra_fields: want dict")
        self.extra_fields = {} if extra_fields is None else extra_fields


# --- configs ------------------------------------------------------------

class Config(dict):
    """DictConfig's attribute and .get access over plain dicts."""

    def __getattr__(self, k):
        try:
            v = self[k]
        except KeyError:
            raise AttributeError(k) from None
        return Config(v) if isinstance(v, dict) and not isinstance(v, Config) else v


class DictConfigWrap:
    def __init__(self, config):
        self.config = config


class ToolListWrap:
    def __init__(self, tools):
        self.tools = tools


def trainer_config(prompt_length=1024, response_length=3072, default_agent_loop="single_turn_agent", calculate_log_probs=True):
    return Config({
        "actor_rollout_ref": {"rollout": {
            "prompt_length": prompt_length, "response_length": response_length, "temperature": 1.0, "top_p": 1.0, "top_k": -1,
            "calculate_log_probs": calculate_log_probs,
            "multi_turn": {"enable": False, "max_assistant_turns": None, "max_user_turns": None, "format": "hermes"},
            "agent": {"num_workers": 8, "default_agent_loop": default_agent_loop, "agent_loop_config_path": None}}},
        "data": {"max_prompt_length": prompt_length, "max_response_length": response_length, "return_raw_chat": True},
    })


# --- AgentLoopBase and the registry -------------------------------------

_agent_loop_registry = {}


def register(agent_name):
    def decorator(subclass):
        _agent_loop_registry[agent_name] = {"_target_": f"{subclass.__module__}.{subclass.__qualname__}"}
        return subclass
    return decorator


class AgentLoopBase:
    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, hf_model_type=None, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager, self.tokenizer, self.processor = server_manager, tokenizer, processor
        self.dataset_cls, self.data_config = dataset_cls, data_config.config
        self.apply_chat_template_kwargs = self.data_config.get("apply_chat_template_kwargs", {})
        self.mm_processor_kwargs = self.data_config.get("mm_processor_kwargs", {})
        self.continuous_token_builder = QwenContinuousTokenBuilder(tokenizer, self.apply_chat_template_kwargs)
        self.loop = asyncio.get_running_loop()

    def _cap_text_prompt_length(self, prompt_ids):
        n = self.rollout_config.prompt_length
        return prompt_ids[-n:] if len(prompt_ids) > n else prompt_ids

    async def ct_build_initial_tokens(self, messages, tools=None, images=None, videos=None, audios=None):
        ids = await self.loop.run_in_executor(None, lambda: self.continuous_token_builder.build_initial_tokens(messages, tools=tools))
        return self._cap_text_prompt_length(ids)

    async def ct_merge_non_assistant_msg(self, previous_messages, updated_messages, runtime_token_ids, response_mask, response_logprobs=None, tools=None):
        b = self.continuous_token_builder
        merge = await self.loop.run_in_executor(None, lambda: b.merge_non_assistant_tokens(previous_messages, updated_messages, runtime_token_ids, tools=tools))
        mask, lps = b.align_response_metadata(merge, response_mask, response_logprobs)
        return merge, mask, lps

    async def ct_merge_assistant_token(self, runtime_token_ids, assistant_token_ids, response_mask, response_logprobs=None, assistant_logprobs=None):
        b = self.continuous_token_builder
        merge = await self.loop.run_in_executor(None, lambda: b.merge_assistant_tokens(runtime_token_ids, assistant_token_ids))
        mask, lps = b.align_response_metadata(merge, response_mask, response_logprobs, assistant_logprobs=assistant_logprobs)
        return merge, mask, lps

    async def run(self, sampling_params, **kwargs):
        raise NotImplementedError


class AgentLoopBaseV080:
    """AgentLoopBase at v0.8.0: apply_chat_template, no Continuous Token."""

    def __init__(self, trainer_config, server_manager, tokenizer, processor, dataset_cls, data_config, **kwargs):
        self.config = trainer_config.config
        self.rollout_config = self.config.actor_rollout_ref.rollout
        self.server_manager, self.tokenizer, self.processor = server_manager, tokenizer, processor
        self.dataset_cls, self.data_config = dataset_cls, data_config.config
        self.apply_chat_template_kwargs = self.data_config.get("apply_chat_template_kwargs", {})
        t1 = tokenizer.apply_chat_template([{"role": "user", "content": ""}], tokenize=True)
        t2 = tokenizer.apply_chat_template([{"role": "user", "content": ""}] * 2, tokenize=True)
        self.system_prompt = t1[: -(len(t2) - len(t1))]  # initialize_system_prompt
        self.loop = asyncio.get_running_loop()

    async def apply_chat_template(self, messages, tools=None, images=None, videos=None, audios=None, mm_processor_kwargs=None, remove_system_prompt=False):
        ids = await self.loop.run_in_executor(None, lambda: self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=True))
        if remove_system_prompt:
            ids = ids[len(self.system_prompt):]
        n = self.rollout_config.prompt_length
        return ids[-n:] if len(ids) > n else ids

    async def run(self, sampling_params, **kwargs):
        raise NotImplementedError


# --- the LLM server -----------------------------------------------------

def opening_key(messages):
    """A conversation's first two messages: which row a request is."""
    return json.dumps([[m["role"], m["content"]] for m in messages[:2]])


def fake_logprob(token_id):
    return -0.5 - (token_id % 7) / 10


class TokenOutput:
    def __init__(self, token_ids, log_probs=None, stop_reason=None):
        self.token_ids, self.log_probs, self.stop_reason = token_ids, log_probs, stop_reason
        self.routed_experts, self.num_preempted, self.extra_fields = None, None, {}


class ServerManager:
    """LLMServerClient: policy(messages) -> text plays the model. Its
    tokens are the text's bytes one by one (not what encode() gives) and
    <|im_end|>. Every generation is logged by request id."""

    def __init__(self, policy, response_length, tokenizer):
        self.policy, self.response_length, self.tokenizer = policy, response_length, tokenizer
        self.log = {}

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, video_data=None, audio_data=None,
                       mm_processor_kwargs=None, **kwargs):
        if not all(isinstance(t, int) for t in prompt_ids):
            raise TypeError("generate: prompt_ids must be token ids")
        messages, gen = parse_chatml(self.tokenizer.decode(prompt_ids))
        if not gen:
            raise ValueError(f"generate: the prompt does not end with the generation prompt: {self.tokenizer.decode(prompt_ids[-12:])!r}")
        ids = list(self.policy(messages).encode()) + [IM_END]
        limit = sampling_params.get("max_tokens", sampling_params.get("max_new_tokens", self.response_length))
        stop = "completed"
        if len(ids) >= limit:
            ids, stop = ids[:limit], "length"
        lps = [fake_logprob(t) for t in ids] if sampling_params.get("logprobs") else None
        self.log.setdefault(request_id, {"prompt": opening_key(messages), "gens": []})["gens"].append(ids)
        await asyncio.sleep(0)
        return TokenOutput(ids, lps, stop)


# --- the worker ---------------------------------------------------------

class Dataset:  # the RLHFDataset class handed to loops (unused by calibrl's)
    pass


def load_agent_loop_config(path):
    """agent_loop_config_path: a YAML list of mappings with scalar values;
    ${oc.env:VAR,default} resolved as OmegaConf does."""
    items, cur = [], None
    with open(path) as f:
        for no, line in enumerate(f, 1):
            body = line.split(" #", 1)[0].rstrip()
            if not body.strip() or body.lstrip().startswith("#"):
                continue
            m = re.match(r"^(- |  )(\w+):\s*(.*)$", body)
            if not m:
                raise ValueError(f"{path}:{no}: not a `- key: value` list entry: {line.rstrip()!r}")
            if m.group(1) == "- ":
                cur = {}
                items.append(cur)
            elif cur is None:
                raise ValueError(f"{path}:{no}: a key before the first list entry")
            v = m.group(3).strip()
            env = re.fullmatch(r"\$\{oc\.env:(\w+),(.*)\}", v)
            if env:
                v = os.environ.get(env.group(1), env.group(2).strip().strip('"'))
            elif v[:1] in "\"'":
                v = v[1:-1]
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            elif re.fullmatch(r"-?\d+\.\d*", v):
                v = float(v)
            cur[m.group(2)] = v
    return items


def instantiate(entry, **kw):
    """hydra.utils.instantiate: _target_ imported by its dotted path, the
    entry's other keys (name included) and kw as keywords."""
    module_name, cls_name = entry["_target_"].rsplit(".", 1)
    cls = getattr(importlib.import_module(module_name), cls_name)
    args = {k: v for k, v in entry.items() if not k.startswith("_")}
    args.update(kw)
    return cls(**args)


def row_kwargs(row, agent_name=True):
    """RLHFDataset.__getitem__ and the batch's non-tensor columns."""
    r = dict(row)
    r["raw_prompt"] = list(row["prompt"])
    extra = r.get("extra_info") or {}
    r["extra_info"] = extra
    r["index"] = extra.get("index", 0)
    r["tools_kwargs"] = extra.get("tools_kwargs", {})
    r["interaction_kwargs"] = extra.get("interaction_kwargs", {})
    if not agent_name:
        r.pop("agent_name", None)
    return r


KNOWN_SOURCES = ("openai/gsm8k", "lighteval/MATH", "math_dapo", "math", "hiyouga/geometry3k", "codecontests")


class Worker:
    """AgentLoopWorker.generate_sequences on one chunk."""

    def __init__(self, config, server_manager, tokenizer, agent_loop_config_path=None, reward_loop=True):
        self.config, self.server_manager, self.tokenizer = config, server_manager, tokenizer
        self.rollout = config.actor_rollout_ref.rollout
        self.reward_loop = reward_loop
        if agent_loop_config_path:
            for entry in load_agent_loop_config(agent_loop_config_path):
                _agent_loop_registry[entry["name"]] = entry

    async def generate_sequences(self, rows, validate=False):
        r = self.rollout
        sampling_params = dict(temperature=r.temperature, top_p=r.top_p, top_k=r.top_k, repetition_penalty=1.0, logprobs=r.calculate_log_probs)
        batch = [row_kwargs(x) for x in rows]
        for i, kw in enumerate(batch):
            kw.setdefault("agent_name", r.agent.default_agent_loop)
            kw["priority"] = i
        outs = await asyncio.gather(*[self._run_agent_loop(dict(sampling_params), **kw) for kw in batch])
        return self._postprocess(outs)

    async def _run_agent_loop(self, sampling_params, *, agent_name, **kwargs):
        if agent_name not in _agent_loop_registry:
            raise AssertionError(f"Agent loop {agent_name} not registered, registered agent loops: {_agent_loop_registry.keys()}")
        loop = instantiate(_agent_loop_registry[agent_name], trainer_config=DictConfigWrap(self.config), server_manager=self.server_manager,
                           tokenizer=self.tokenizer, processor=None, hf_model_type="qwen2", dataset_cls=Dataset,
                           data_config=DictConfigWrap(self.config.data), tools=ToolListWrap([]))
        if not inspect.iscoroutinefunction(loop.run):
            raise TypeError(f"{type(loop).__name__}.run is not a coroutine function")
        output = await loop.run(sampling_params, **kwargs)
        if not isinstance(output, AgentLoopOutput):
            raise TypeError(f"{type(loop).__name__}.run returned {type(output).__name__}, want AgentLoopOutput")
        return self._agent_loop_postprocess(output, **kwargs)

    def _pad(self, tokens, max_length, side, attention):
        if not tokens:
            out = {"input_ids": [PAD] * max_length}
            if attention:
                out["attention_mask"] = [0] * max_length
            return out
        self.tokenizer.padding_side = side
        return self.tokenizer.pad({"input_ids": tokens}, max_length=max_length, return_attention_mask=attention)

    def _agent_loop_postprocess(self, output, **kwargs):
        output.extra_fields["raw_prompt"] = kwargs["raw_prompt"]
        P, R = self.rollout.prompt_length, self.rollout.response_length
        prompt = self._pad(output.prompt_ids, P, "left", True)
        response = self._pad(output.response_ids, R, "right", True)
        mask = self._pad(output.response_mask, R, "right", False)
        # torch.cat of the rows below needs these widths.
        for what, v, n in (("prompt", prompt["input_ids"], P), ("response", response["input_ids"], R), ("response_mask", mask["input_ids"], R)):
            if len(v) != n:
                raise ValueError(f"torch.cat: {what} padded to {len(v)} tokens, the batch is {n} wide (pad never cuts: the loop must)")
        if len(output.response_mask) != len(output.response_ids):
            # verl does not check: it pads the mask with the pad id and
            # multiplies by the response's attention mask, so the loss
            # weights tokens by 151643 (mask short) or drops them (long).
            raise ValueError(f"response_mask of {len(output.response_mask)} for {len(output.response_ids)} response tokens: "
                             f"verl would train on mask values {sorted(set(m * a for m, a in zip(mask['input_ids'], response['attention_mask'])))}")
        logprobs = None
        if output.response_logprobs is not None:
            logprobs = output.response_logprobs + [0.0] * (R - len(output.response_logprobs))
            if len(logprobs) != R:
                raise ValueError(f"torch.cat: response_logprobs of {len(logprobs)}, the batch is {R} wide")
        response_mask = [m * a for m, a in zip(mask["input_ids"], response["attention_mask"])]
        if output.reward_score is None and self.reward_loop:
            # The reward loop's default scorer, for the row's data_source.
            src = str(kwargs.get("data_source"))
            if src not in KNOWN_SOURCES:
                raise NotImplementedError(f"Reward function is not implemented for data_source={src!r}")
        return {"prompts": prompt["input_ids"], "responses": response["input_ids"], "response_mask": response_mask,
                "attention_mask": prompt["attention_mask"] + response["attention_mask"],
                "input_ids": prompt["input_ids"] + response["input_ids"], "rollout_log_probs": logprobs,
                "reward_score": output.reward_score, "num_turns": output.num_turns, "metrics": output.metrics.model_dump(),
                "extra_fields": output.extra_fields, "raw": output}

    def _postprocess(self, inputs):
        P = self.rollout.prompt_length
        scores = [x["reward_score"] for x in inputs]
        if all(s is not None for s in scores):
            for x, s in zip(inputs, scores):
                rm = [0.0] * len(x["response_mask"])
                rm[sum(x["attention_mask"][P:]) - 1] = struct.unpack("f", struct.pack("f", s))[0]  # float32
                x["rm_scores"] = rm
        keys = set(k for x in inputs for k in x["extra_fields"]) | {"turn_scores", "tool_rewards", "min_global_steps", "max_global_steps", "extras"}
        for x in inputs:
            x["__num_turns__"] = int(x["num_turns"])  # np.int32
            x["non_tensor"] = {k: x["extra_fields"].get(k) for k in keys}
        return inputs


def float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


# --- modules ------------------------------------------------------------

def install(version=VERSION):
    """Puts the stand-in where the adapter imports verl; no
    verl.interactions (deleted by PR #6074)."""
    for name in [n for n in sys.modules if n == "verl" or n.startswith("verl.")]:
        del sys.modules[name]
    for name in ("verl", "verl.experimental", "verl.experimental.agent_loop", "verl.workers", "verl.workers.rollout"):
        sys.modules[name] = types.ModuleType(name)
        sys.modules[name].__path__ = []  # a package, whose other submodules are not there
    al = types.ModuleType("verl.experimental.agent_loop.agent_loop")
    al.AgentLoopBase = AgentLoopBaseV080 if version == "v0.8.0" else AgentLoopBase
    al.AgentLoopOutput, al.AgentLoopMetrics, al.register, al._agent_loop_registry = AgentLoopOutput, AgentLoopMetrics, register, _agent_loop_registry
    al.DictConfigWrap, al.ToolListWrap = DictConfigWrap, ToolListWrap
    sys.modules[al.__name__] = al
    pkg = sys.modules["verl.experimental.agent_loop"]
    pkg.AgentLoopBase, pkg.AgentLoopOutput = al.AgentLoopBase, AgentLoopOutput
    rep = types.ModuleType("verl.workers.rollout.replica")
    rep.TokenOutput = TokenOutput
    sys.modules[rep.__name__] = rep
