"""Conformance of the trainer adapters, against a live `calibrl serve`.

Plain python3, no packages. Each trainer is replayed by a stand-in written
from its code at the version the adapter names (conformance_verl.py,
conformance_trl.py, conformance_openrlhf.py): the calls it makes, in its
order, with its argument types, and what it does with every return value.

Episodes are logged by `calibrl eval` (scripted agents, the human proxy;
docedit, whose environment notes each agent turn, and mathchat with the
ledger, which notes each reply), exported with `calibrl export --kind
prompts`, and read back through each trainer's own data path. The "model"
is the logged agent: at each turn it checks that what the trainer shows it
is the conversation calibrl's own agent read at that point (the user's
replies and the environment's notes, where calibrl puts them), then says
the logged turn. The reward each trainer trains on must equal the logged
reward exactly, every HTTP call must run off the event loop, and no episode
may be left on the server when the trainer is done with it.

    python3 adapters/test_adapters.py CALIBRL_BINARY [--adapters DIR]

--adapters runs other adapter files (an older version) against the same
stand-ins. scripts/test-adapters.sh builds the binary and runs this.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def chat(msgs):
    return [{"role": m["role"], "content": m["content"]} for m in msgs]


class Logged:
    """One logged episode as its agent read it: the turns it said, and
    before each (and at the end) the conversation so far."""

    def __init__(self, row, ep):
        self.row, self.ep = row, ep
        msgs = chat(ep["messages"])
        self.turns = [m["content"] for m in msgs if m["role"] == "assistant"]
        # after[k]: the messages between agent turn k and the next (notes,
        # reply, notes), in calibrl's order and roles.
        self.after, cur = [], None
        for m in msgs[1:]:
            if m["role"] == "assistant":
                cur = []
                self.after.append(cur)
            elif cur is not None:
                cur.append(m)
        self.full = chat(row["prompt"]) + msgs[1:]

    def agent_chat(self, k):
        """dialog.AgentChat before agent turn k (k = len(turns): the end)."""
        out = chat(self.row["prompt"])
        for j in range(k):
            out.append({"role": "assistant", "content": self.turns[j]})
            out += self.after[j]
        return out

    def flat(self, k):
        """The same with what follows each turn as one string (verl's user
        message, TRL's tool result)."""
        return "\n\n".join(m["content"] for m in self.after[k])


def differ(got, want):
    """Where two conversations first part: the message, and the text
    around the first character that differs."""
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        if g == w:
            continue
        if g is None or w is None or g["role"] != w["role"]:
            return f"message {i}: got {g and g['role']} {g and g['content'][:80]!r}, want {w and w['role']} {w and w['content'][:80]!r}"
        j = next((j for j, (a, b) in enumerate(zip(g["content"], w["content"])) if a != b), min(len(g["content"]), len(w["content"])))
        return f"message {i} ({g['role']}), from character {j}: got {g['content'][max(0, j - 40):j + 80]!r}, want {w['content'][max(0, j - 40):j + 80]!r}"
    return "the same"


# --- the server ---------------------------------------------------------

def server_episodes(url):
    with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
        return json.load(r)["episodes"]


current = [""]  # the trainer being replayed, for watch_blocking


def watch_blocking(client_module):
    """Records every HTTP call made on a running event loop's thread, by
    trainer: a blocking call there stalls every other rollout on that loop."""
    # Every request goes through _request (an older client: _call).
    name = "_request" if hasattr(client_module.Client, "_request") else "_call"
    orig = getattr(client_module.Client, name)
    blocked = {}

    def _call(self, *args):
        method, path = args[1:3] if name == "_request" else args[:2]
        try:
            asyncio.get_running_loop()
            blocked.setdefault(current[0], set()).add(method + " " + re.sub(r"/episodes/[^/]+", "/episodes/{id}", path))
        except RuntimeError:
            pass
        return orig(self, *args)

    setattr(client_module.Client, name, _call)
    return blocked


# --- verl ---------------------------------------------------------------

async def play_verl(url, adapters, log):
    import conformance_verl as cv

    inter = cv.interaction_from_config([{"name": "calibrl", "class_name": "calibrl_verl_v07.CalibrlInteraction", "config": {"base_url": url, "user": "human"}}])
    tag = f"verl {log.ep['id']} ({log.ep['task']})"
    seen = []

    def model(messages):
        k = len(seen)
        want = chat(log.row["prompt"])
        for j in range(k):
            want += [{"role": "assistant", "content": log.turns[j]}, {"role": "user", "content": log.flat(j)}]
        check(chat(messages) == want, f"{tag} turn {k + 1}: the policy does not read the conversation calibrl's agent read: {differ(chat(messages), want)}")
        seen.append(k)
        return log.turns[k] if k < len(log.turns) else ""

    # The recipe sets max_assistant_turns above the rows' max_turns.
    max_turns = log.row["extra_info"]["interaction_kwargs"].get("max_turns") or 10
    messages, scores, mask, num_turns = await cv.run_tool_agent_loop(inter, log.row, model, max_assistant_turns=max_turns + 1)
    check(len(seen) == len(log.turns), f"{tag}: verl asked for {len(seen)} turns, the episode has {len(log.turns)}")
    want = chat(log.row["prompt"])
    for j in range(len(log.turns)):
        want += [{"role": "assistant", "content": log.turns[j]}, {"role": "user", "content": log.flat(j)}]
    check(chat(messages) == want, f"{tag}: the rollout verl trains on is not the logged conversation: {differ(chat(messages), want)}")
    fn = cv.custom_reward_fn(os.path.join(adapters, "calibrl_verl_reward.py"), "compute_score")
    reward = run("verl reward", lambda: cv.reward_loop_score(log.row, scores, num_turns, fn, messages[-1]["content"]))
    check(reward == log.ep["reward"], f"{tag}: training reward {reward}, calibrl eval's {log.ep['reward']}")
    check(server_episodes(url) == 0, f"{tag}: {server_episodes(url)} episode(s) left on the server after the rollout (verl never calls finalize_interaction)")
    return reward


async def verl_across_replicas(urls, adapters, log):
    """verl's rollout with every call sent to the other of two serve
    replicas (round robin behind a load balancer): each turn the adapter
    sends verl's message list, from which a replica that does not hold the
    episode rebuilds it (docs/serve.md), and the reward is eval's."""
    import conformance_verl as cv

    inter = cv.interaction_from_config([{"name": "calibrl", "class_name": "calibrl_verl_v07.CalibrlInteraction", "config": {"base_url": urls[0], "user": "human"}}])
    client = inter["calibrl"].client
    calls = [0]
    if hasattr(type(client), "_request"):
        plain = type(client)._request

        def alternating(self, base_url, method, path, body=None):
            calls[0] += 1
            return plain(self, urls[(calls[0] - 1) % len(urls)], method, path, body)

        client._request = alternating.__get__(client)
    else:  # an older client: every call through _call, to base_url
        plain = type(client)._call

        def alternating(self, method, path, body=None):
            self.base_url = urls[calls[0] % len(urls)]
            calls[0] += 1
            return plain(self, method, path, body)

        client._call = alternating.__get__(client)
    tag = f"verl across replicas {log.ep['id']} ({log.ep['task']})"
    seen = []

    def model(messages):
        k = len(seen)
        seen.append(k)
        return log.turns[k] if k < len(log.turns) else ""

    max_turns = log.row["extra_info"]["interaction_kwargs"].get("max_turns") or 10
    messages, scores, mask, num_turns = await cv.run_tool_agent_loop(inter, log.row, model, max_assistant_turns=max_turns + 1)
    fn = cv.custom_reward_fn(os.path.join(adapters, "calibrl_verl_reward.py"), "compute_score")
    reward = run("verl reward", lambda: cv.reward_loop_score(log.row, scores, num_turns, fn, messages[-1]["content"]))
    check(reward == log.ep["reward"], f"{tag}: training reward {reward}, calibrl eval's {log.ep['reward']}")
    check(calls[0] >= 3, f"{tag}: {calls[0]} calls: the episode never moved between replicas")
    return reward


def verl_mixed_sources(adapters):
    """A row of another data source still reaches verl's own scorer."""
    import conformance_verl as cv

    fn = cv.custom_reward_fn(os.path.join(adapters, "calibrl_verl_reward.py"), "compute_score")
    if not check(fn is not None, "verl: no custom_reward_function file (calibrl_verl_reward.py): verl's default scorer gets calibrl's rows"):
        return
    before = len(cv.default_calls)
    got = fn(data_source="openai/gsm8k", solution_str="#### 7", ground_truth="7", extra_info={})
    check(got == 1.0 and len(cv.default_calls) == before + 1, f"verl: an openai/gsm8k row scored {got} without verl's default scorer")


async def verl_cut_short(url, adapters, log):
    """verl stops at max_assistant_turns without a word: the episode stays
    until the next rollout on the worker finds it idle past
    release_after_s (0 here) and releases it."""
    import conformance_verl as cv

    inter = cv.interaction_from_config([{"name": "calibrl", "class_name": "calibrl_verl_v07.CalibrlInteraction",
                                         "config": {"base_url": url, "user": "human", "release_after_s": 0}}])
    turns = iter(log.turns)
    await cv.run_tool_agent_loop(inter, log.row, lambda m: next(turns), max_assistant_turns=2)
    check(server_episodes(url) == 1, f"verl cut short: {server_episodes(url)} episodes on the server, want the cut one")
    turns = iter(log.turns)
    await cv.run_tool_agent_loop(inter, log.row, lambda m: next(turns), max_assistant_turns=len(log.turns) + 1)
    check(server_episodes(url) == 0, f"verl cut short: {server_episodes(url)} episode(s) left after the next rollout, want the cut one released")


def verl_recipe():
    """The recipe names the files it needs, and they are there."""
    recipe = os.path.join(HERE, "recipe", "calibrl_verl_v07")
    with open(os.path.join(recipe, "config", "interaction_config", "calibrl_interaction_config.yaml")) as f:
        inter = f.read()
    check('class_name: "calibrl_verl_v07.CalibrlInteraction"' in inter and 'name: "calibrl"' in inter, "verl recipe: the interaction config does not name calibrl_verl_v07.CalibrlInteraction as calibrl")
    with open(os.path.join(recipe, "config", "calibrl_multiturn_grpo.yaml")) as f:
        cfg = f.read()
    for want in ("default_agent_loop: tool_agent", "name: compute_score", "use_reward_loop: True", "return_raw_chat: True", "max_assistant_turns: 11"):
        check(want in cfg, f"verl recipe: config lacks {want!r}")
    with open(os.path.join(recipe, "run_qwen2.5-0.5b_calibrl_multiturn.sh")) as f:
        run_sh = f.read()
    for want in ('custom_reward_function.path="$ADAPTERS_DIR/calibrl_verl_reward.py"', "interaction_config/calibrl_interaction_config.yaml", "--config-name=calibrl_multiturn_grpo"):
        check(want in run_sh, f"verl recipe: launch script lacks {want!r}")


# --- TRL ----------------------------------------------------------------

def play_trl(url, adapters, log, version):
    import conformance_trl as ct
    import calibrl_trl

    tag = f"trl {version} {log.ep['id']} ({log.ep['task']})"
    if version == "1.8":
        cls, funcs = calibrl_trl.CalibrlEnv, []
    else:
        cls = getattr(calibrl_trl, "LegacyCalibrlEnv", calibrl_trl.CalibrlEnv)
        funcs = [calibrl_trl.reward] if hasattr(calibrl_trl, "reward") else []
    factory = lambda: cls(base_url=url)  # noqa: E731
    if version == "0.29" and not funcs:
        # What an adapter without a reward function leaves the user to write.
        funcs = [lambda environments, **kw: [e.get_reward() for e in environments]]
    funcs = ct.probe(factory, version, funcs)
    seen = []

    def model(messages, tools):
        k = len(seen)
        check(tools == ["reply"], f"{tag}: the model is offered tools {tools}, want only reply")
        want = chat(log.row["prompt"])
        got = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "assistant"]
        for j in range(k):
            want.append({"role": "tool", "content": log.flat(j)})
        check(got == want, f"{tag} turn {k + 1}: the policy does not read the conversation calibrl's agent read: {differ(got, want)}")
        seen.append(k)
        if k < len(log.turns):
            return {"content": "", "tool_calls": [ct.tool_call("reply", {"message": log.turns[k]})]}
        return {"content": "Thank you."}

    env = factory()
    row = dict(log.row)
    ct.rollout(env, row, model, version)
    check(len(seen) == len(log.turns) + 1, f"{tag}: {len(seen)} generations for {len(log.turns)} turns")
    reward = ct.rewards(funcs, [env], [row["prompt"]], [[]])[0]
    check(reward == log.ep["reward"], f"{tag}: training reward {reward}, calibrl eval's {log.ep['reward']}")
    check(server_episodes(url) == 0, f"{tag}: {server_episodes(url)} episode(s) left on the server after the reward was read")
    return reward


def trl_pooled(url, logs):
    """TRL f2cd577 across batches: one pool of instances reset again for
    later rows, rows without a prompt (TRL then starts from an empty user
    message and reset supplies the opening), the rewards of a batch read
    after its rollouts."""
    import conformance_trl as ct
    import calibrl_trl

    trainer = ct.Trainer(lambda: calibrl_trl.CalibrlEnv(base_url=url), "1.8")
    total = 0.0
    for b in range(0, len(logs), 4):
        batch = logs[b:b + 4]
        rows = [{k: v for k, v in log.row.items() if not (j % 2 and k == "prompt")} for j, log in enumerate(batch)]
        models = iter(batch)

        def model(messages, tools):
            k = sum(1 for m in messages if m["role"] == "tool")
            if k < len(model.log.turns):
                return {"content": "", "tool_calls": [ct.tool_call("reply", {"message": model.log.turns[k]})]}
            return {"content": "Thank you."}

        def each(messages, tools):
            if len(messages) <= 2:  # a new rollout starts from its prompt
                model.log = next(models)
            return model(messages, tools)

        convs, rewards = trainer.step(rows, each)
        for log, conv, r in zip(batch, convs, rewards):
            want_open = log.row["prompt"][-1]["content"]
            first = conv[1] if conv[0]["role"] == "system" else conv[0]
            check(first["content"] == want_open, f"trl pooled {log.ep['id']}: the agent reads {first['content'][:60]!r} first, want the opening {want_open[:60]!r}")
            check(r == log.ep["reward"], f"trl pooled {log.ep['id']}: reward {r}, calibrl eval's {log.ep['reward']}")
            total += r
    check(len(trainer.pool) == 4, f"trl pooled: {len(trainer.pool)} instances for batches of 4")
    check(server_episodes(url) == 0, f"trl pooled: {server_episodes(url)} episode(s) left on the server")
    return total


# --- OpenRLHF -----------------------------------------------------------

async def play_openrlhf(url, adapters, log, dataset_row):
    import conformance_openrlhf as co

    tag = f"openrlhf {log.ep['id']} ({log.ep['task']})"
    os.environ["CALIBRL_URL"] = url
    module = co.load_agent_module(os.path.join(adapters, "calibrl_openrlhf.py"))
    executor = run("openrlhf executor", lambda: co.load_agent_executor(module))
    if executor is None:  # go on with the instance alone, to check the rest
        executor = co.MultiTurnAgentExecutor(module.AgentInstance)
    tok = co.ChatMLTokenizer()
    prompt, label = co.preprocess_data(dataset_row, "prompt", "label", tok)
    seen = []

    def model(text):
        k = len(seen)
        want = log.agent_chat(k)
        check(text.endswith("<|im_start|>assistant\n") and co.parse_chatml(text) == want,
              f"{tag} turn {k + 1}: the policy does not read calibrl's AgentChat (notes as system messages): {differ(co.parse_chatml(text), want)}; the text ends {text[-30:]!r}")
        seen.append(k)
        # A model may stop with its end-of-turn token in the text or not.
        return (log.turns[k] + ("<|im_end|>" if k % 2 == 0 else "")) if k < len(log.turns) else ""

    out = await executor.execute(prompt=prompt, label=label, sampling_params=co.SamplingParams(), max_length=1 << 20,
                                 hf_tokenizer=tok, llm_engine=co.Engine(model, tok), images=None)
    check(len(seen) == len(log.turns), f"{tag}: {len(seen)} generations for {len(log.turns)} turns")
    check(co.parse_chatml(out["observation_text"]) == log.full, f"{tag}: the rollout's text is not the logged conversation: {differ(co.parse_chatml(out['observation_text']), log.full)}")
    info = co.experience_info(out)
    reward = info["reward"].item()
    check(reward == log.ep["reward"], f"{tag}: training reward {reward}, calibrl eval's {log.ep['reward']}")
    check(server_episodes(url) == 0, f"{tag}: {server_episodes(url)} episode(s) left on the server after the rollout")
    return reward


async def openrlhf_cut_short(url, adapters, log, dataset_row):
    """The executor stops at max_length without a word: the episode must
    still be released."""
    import conformance_openrlhf as co

    executor = co.load_agent_executor(co.load_agent_module(os.path.join(adapters, "calibrl_openrlhf.py")))
    tok = co.ChatMLTokenizer()
    prompt, label = co.preprocess_data(dataset_row, "prompt", "label", tok)
    budget = len(prompt) + len(log.turns[0]) + 5  # one turn, then no room
    await executor.execute(prompt=prompt, label=label, sampling_params=co.SamplingParams(), max_length=budget,
                           hf_tokenizer=tok, llm_engine=co.Engine(lambda text: log.turns[0], tok), images=None)
    check(server_episodes(url) == 0, f"openrlhf {log.ep['id']}: {server_episodes(url)} episode(s) left on the server after the executor ran out of tokens")


# --- a policy that reads the notes --------------------------------------

LEDGER_ANSWER = re.compile(r"Every number told\. The answer is ([^ ]+?)\.(?:\s|$)")
LEDGER_NEXT = re.compile(r"Next: (.+?)(?:\n|$)")


def ledger_reader(messages):
    """A mathchat agent that does what the ledger says: it answers with the
    ledger's answer, else asks the ledger's next question. It reads only
    what follows its own last turn, in whatever roles the trainer put it,
    so it plays the same whether calibrl (eval --agent remote:) or a
    trainer shows it the conversation, and solves nothing without the
    notes."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
    after = "\n".join(m["content"] for m in messages[last + 1:] if m["role"] != "assistant")
    if m := LEDGER_ANSWER.search(after):
        return f"The answer is {m.group(1)}."
    if m := LEDGER_NEXT.search(after):
        return m.group(1).strip()
    return "Which number do you need to tell me first?"


def serve_policy(policy):
    """An OpenAI-compatible /v1/chat/completions playing policy, for
    `calibrl eval --agent remote:NAME`."""
    return serve_chat(lambda req: policy(req["messages"]))


def serve_chat(reply, broken_off_ok=False):
    """An OpenAI-compatible /v1/chat/completions on a free local port whose
    answer's content is reply(request); the caller shuts it down. With
    broken_off_ok, a request that breaks off (its client, a replica, was
    killed mid-call) prints no traceback."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = reply(req)
            body = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": req["model"],
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        # Every concurrent rollout's request at once (test_replicas.py: 16
        # per replica): a full backlog drops a SYN, retried a second later.
        request_queue_size = 256

        def handle_error(self, request, client_address):
            if not broken_off_ok:
                super().handle_error(request, client_address)

    srv = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def ledger_reader_episodes(binary, tmp):
    """calibrl eval of the ledger reader, and the rows that reopen its episodes."""
    srv = serve_policy(ledger_reader)
    try:
        out = os.path.join(tmp, "reader.jsonl")
        env = dict(os.environ, OPENAI_BASE_URL=f"http://127.0.0.1:{srv.server_address[1]}/v1")
        env.pop("CALIBRL_REMOTE_CONFIG", None)
        subprocess.run([binary, "eval", "--task", "mathchat:h4:ledger", "--agent", "remote:ledger-reader", "--user", "human", "-n", "8",
                        "--max-turns", "6", "--seed", "11", "--episodes-out", out], check=True, capture_output=True, env=env, timeout=120)
    finally:
        srv.shutdown()
    eps = read_jsonl(out)
    rows_path = os.path.join(tmp, "reader-prompts.jsonl")
    subprocess.run([binary, "export", "--logs", out, "--kind", "prompts", "--out", rows_path], check=True, capture_output=True)
    return eps, read_jsonl(rows_path)


async def reader_verl(url, adapters, row):
    import conformance_verl as cv

    inter = cv.interaction_from_config([{"name": "calibrl", "class_name": "calibrl_verl_v07.CalibrlInteraction", "config": {"base_url": url, "user": "human"}}])
    messages, scores, _, num_turns = await cv.run_tool_agent_loop(inter, row, ledger_reader, max_assistant_turns=7)
    fn = cv.custom_reward_fn(os.path.join(adapters, "calibrl_verl_reward.py"), "compute_score")
    return cv.reward_loop_score(row, scores, num_turns, fn, messages[-1]["content"])


def reader_trl(url, row, version):
    import conformance_trl as ct
    import calibrl_trl

    cls = calibrl_trl.CalibrlEnv if version == "1.8" else getattr(calibrl_trl, "LegacyCalibrlEnv", calibrl_trl.CalibrlEnv)
    funcs = [] if version == "1.8" else [getattr(calibrl_trl, "reward", lambda environments, **kw: [e.get_reward() for e in environments])]
    factory = lambda: cls(base_url=url)  # noqa: E731
    funcs = ct.probe(factory, version, funcs)

    def model(messages, tools):
        if messages[-1]["role"] == "tool" and messages[-1]["content"].startswith("(The user has left"):
            return {"content": "Goodbye."}
        return {"content": "", "tool_calls": [ct.tool_call("reply", {"message": ledger_reader(messages)})]}

    env = factory()
    ct.rollout(env, dict(row), model, version, max_tool_calling_iterations=8)
    return ct.rewards(funcs, [env], [row["prompt"]], [[]])[0]


async def reader_openrlhf(url, adapters, row):
    import conformance_openrlhf as co

    module = co.load_agent_module(os.path.join(adapters, "calibrl_openrlhf.py"))
    try:
        executor = co.load_agent_executor(module)
    except Exception:  # reported by play_openrlhf; go on with the instance
        executor = co.MultiTurnAgentExecutor(module.AgentInstance)
    tok = co.ChatMLTokenizer()
    prompt, label = co.preprocess_data(row, "prompt", "label", tok)
    model = lambda text: ledger_reader(co.parse_chatml(text)) + "<|im_end|>"  # noqa: E731
    out = await executor.execute(prompt=prompt, label=label, sampling_params=co.SamplingParams(), max_length=1 << 20,
                                 hf_tokenizer=tok, llm_engine=co.Engine(model, tok), images=None)
    return co.experience_info(out)["reward"].item()


def reader_checks(url, adapters, eps, rows):
    solved = sum(1 for ep in eps if ep["success"])
    check(solved >= len(eps) // 2, f"ledger reader: calibrl eval solved {solved} of {len(eps)}: the check shows nothing")
    totals = {"eval": 0.0, "verl": 0.0, "trl 1.8": 0.0, "trl 0.29": 0.0, "openrlhf": 0.0}
    for row, ep in zip(rows, eps):
        totals["eval"] += ep["reward"]
        for name, fn in (("verl", lambda: asyncio.run(reader_verl(url, adapters, row))), ("trl 1.8", lambda: reader_trl(url, row, "1.8")),
                         ("trl 0.29", lambda: reader_trl(url, row, "0.29")), ("openrlhf", lambda: asyncio.run(reader_openrlhf(url, adapters, row)))):
            got = run(f"{name} ledger reader", fn)
            check(got == ep["reward"], f"{name} ledger reader {ep['id']}: reward {got}, calibrl eval's {ep['reward']} for the same agent")
            totals[name] += got or 0
    print(f"ledger reader on mathchat:h4:ledger: calibrl eval solved {solved} of {len(eps)}")
    for k, v in totals.items():
        print(f"  mean reward {k:9s} {v / len(eps):.4f}")


# --- main ---------------------------------------------------------------

def run(name, fn):
    outer, current[0] = current[0], current[0] or name
    try:
        return fn()
    except Exception as e:  # one trainer's crash must not hide the others'
        tb = traceback.extract_tb(e.__traceback__)[-1]
        check(False, f"{name}: {type(e).__name__}: {e} (at {os.path.basename(tb.filename)}:{tb.lineno})")
        return None
    finally:
        current[0] = outer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--adapters", default=HERE, help="folder of the adapter files under test")
    args = ap.parse_args()
    binary, adapters = os.path.abspath(args.binary), os.path.abspath(args.adapters)
    sys.path[:0] = [adapters, HERE]
    import conformance_openrlhf
    import conformance_verl

    conformance_verl.install()
    conformance_openrlhf.install()
    import calibrl_client

    blocked = watch_blocking(calibrl_client)

    tmp = tempfile.mkdtemp(prefix="calibrl-adapters-")
    # Levels and turn limits other than the server's, so a row that lost
    # either would open another episode; docedit notes each agent turn,
    # the ledger each reply.
    runs = [("mathchat:easy", "scripted:careful", "4"), ("mathchat:easy", "scripted:sloppy", "3"),
            ("docedit:easy", "scripted:careful", "5"), ("docedit", "scripted:sloppy", "6"), ("mathchat:h4:ledger", "scripted:careful", "6")]
    eps = []
    for task, agent, turns in runs:
        part = os.path.join(tmp, f"{len(eps)}.jsonl")
        subprocess.run([binary, "eval", "--task", task, "--agent", agent, "--user", "human", "-n", "4", "--max-turns", turns,
                        "--seed", "7", "--episodes-out", part], check=True, capture_output=True)
        eps += read_jsonl(part)
    logs, prompts = os.path.join(tmp, "eps.jsonl"), os.path.join(tmp, "prompts.jsonl")
    with open(logs, "w") as f:
        for ep in eps:
            f.write(json.dumps(ep) + "\n")
    subprocess.run([binary, "export", "--logs", logs, "--kind", "prompts", "--out", prompts], check=True, capture_output=True)
    rows = read_jsonl(prompts)
    check(len(rows) == len(eps), f"export wrote {len(rows)} rows for {len(eps)} episodes")
    notes = sum(1 for ep in eps for m in ep["messages"] if m["role"] == "system")
    reader_eps, reader_rows = ledger_reader_episodes(binary, tmp)
    check(notes > 0, "no environment notes in the logged episodes: the test would show nothing")

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    srv = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--max-turns", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    totals = {"eval": 0.0, "verl": 0.0, "trl 1.8": 0.0, "trl 0.29": 0.0, "openrlhf": 0.0}
    try:
        for _ in range(100):
            try:
                server_episodes(url)
                break
            except OSError:
                time.sleep(0.1)
        for row, ep in zip(rows, eps):
            log = Logged(row, ep)
            totals["eval"] += ep["reward"]
            totals["verl"] += run("verl", lambda: asyncio.run(play_verl(url, adapters, log))) or 0
            totals["trl 1.8"] += run("trl 1.8", lambda: play_trl(url, adapters, log, "1.8")) or 0
            totals["trl 0.29"] += run("trl 0.29", lambda: play_trl(url, adapters, log, "0.29")) or 0
            totals["openrlhf"] += run("openrlhf", lambda: asyncio.run(play_openrlhf(url, adapters, log, row))) or 0
        totals["trl 1.8 pooled"] = run("trl pooled", lambda: trl_pooled(url, [Logged(r, e) for r, e in zip(rows, eps)])) or 0
        run("verl data sources", lambda: verl_mixed_sources(adapters))
        run("verl recipe", verl_recipe)
        long = next(Logged(r, e) for r, e in zip(rows, eps) if len([m for m in e["messages"] if m["role"] == "assistant"]) >= 3)
        run("verl cut short", lambda: asyncio.run(verl_cut_short(url, adapters, long)))
        reader_checks(url, adapters, reader_eps, reader_rows)
        run("openrlhf cut short", lambda: asyncio.run(openrlhf_cut_short(url, adapters, Logged(rows[0], eps[0]), rows[0])))
        # Last: copies of these episodes stay on the replica that did not
        # get the DELETE until their TTL (docs/serve.md).
        port2 = free_port()
        url2 = f"http://127.0.0.1:{port2}"
        srv2 = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port2}", "--max-turns", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    server_episodes(url2)
                    break
                except OSError:
                    time.sleep(0.1)
            replicated = 0.0
            for row, ep in zip(rows, eps):
                log = Logged(row, ep)
                replicated += run("verl across replicas", lambda: asyncio.run(verl_across_replicas([url, url2], adapters, log))) or 0
            totals["verl, 2 replicas"] = replicated
        finally:
            srv2.terminate()
            srv2.wait(timeout=30)
        for trainer, calls in sorted(blocked.items()):
            check(False, f"{trainer}: blocking HTTP on the event loop's thread: {', '.join(sorted(calls))}")
        print(f"{len(eps)} episodes ({', '.join(t + ' ' + a + ' max ' + n for t, a, n in runs)}), {notes} environment notes")
        for k, v in totals.items():
            print(f"  mean reward {k:17s} {v / len(eps):.4f}")
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("ok: every trainer read calibrl's conversation and trained on calibrl eval's reward")


if __name__ == "__main__":
    main()
