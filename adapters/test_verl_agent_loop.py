"""Conformance of calibrl_verl_agent_loop.py (verl 0.8 and later), against a live `calibrl serve`.

Plain python3, no packages. verl's agent loop machinery is replayed by
conformance_verl_agent_loop.py (written from verl-project/verl at the
commit it names): the registry and agent_name, instantiate, run, the
post-processing that pads and batches what run returns, and an LLM server
that speaks token ids. Checked, per episode logged by `calibrl eval`:

  - the policy reads, at every turn, the conversation calibrl's agent read;
  - token in, token out: the response's mask-1 tokens are exactly the
    tokens the server generated, in order, and every other token
    (the user's replies, the template around them) has mask 0;
  - the reward verl trains on (reward_score, then rm_scores in float32)
    is `calibrl eval`'s for the same episode, and no episode is left on
    the server;
  - the same on verl v0.8.0's AgentLoopBase (apply_chat_template);
  - the checks fail on broken adapters: the BaseInteraction adapter
    (verl/interactions is gone), and sabotaged copies of the agent loop
    (user tokens unmasked, a mask shorter than the response, decoded text
    re-encoded, no reward_score);
  - two replicas, one killed (SIGKILL) and restarted mid-run: episodes
    lost, retries and the p99 latency of a turn (--kill N episodes).

    python3 adapters/test_verl_agent_loop.py CALIBRL_BINARY [--adapters DIR] [--kill N]

scripts/test-adapters.sh builds the binary and runs this.
"""

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE]

import test_adapters as ta  # noqa: E402  (Logged, ledger_reader, server_episodes, free_port)

failures = ta.failures
check = ta.check


def load_recipe_module():
    path = os.path.join(HERE, "recipe", "calibrl_agent_loop", "create_dataset.py")
    spec = importlib.util.spec_from_file_location("calibrl_create_dataset", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def start_serve(binary, port):
    return subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--max-turns", "10"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_up(url):
    for _ in range(200):
        try:
            return ta.server_episodes(url)
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url}: calibrl serve did not start")


def eval_rows(binary, tmp, runs, name):
    """calibrl eval's episodes and the rows create_dataset.py makes of them."""
    eps = []
    for task, agent, turns, n, seed in runs:
        part = os.path.join(tmp, f"{name}-{len(eps)}.jsonl")
        subprocess.run([binary, "eval", "--task", task, "--agent", agent, "--user", "human", "-n", str(n), "--max-turns", turns,
                        "--seed", str(seed), "--episodes-out", part], check=True, capture_output=True)
        eps += ta.read_jsonl(part)
    logs, prompts = os.path.join(tmp, f"{name}.jsonl"), os.path.join(tmp, f"{name}-prompts.jsonl")
    with open(logs, "w") as f:
        for ep in eps:
            f.write(json.dumps(ep) + "\n")
    subprocess.run([binary, "export", "--logs", logs, "--kind", "prompts", "--out", prompts], check=True, capture_output=True)
    with open(prompts) as f:
        rows = load_recipe_module().agent_rows(f, prompts)
    return eps, rows


def prompt_key(messages):
    import conformance_verl_agent_loop as cv

    return cv.opening_key(messages)


class Replayer:
    """The model: says each logged episode's turns, after checking that it
    reads what calibrl's agent read; episodes are told apart by their
    opening."""

    def __init__(self, logs, problems):
        self.by_key = {prompt_key(ta.chat(lg.row["prompt"])): lg for lg in logs}
        self.turn = {}
        self.problems = problems
        if len(self.by_key) != len(logs):
            problems.append(f"{len(logs) - len(self.by_key)} episodes share an opening: the replay cannot tell them apart")

    def __call__(self, messages):
        lg = self.by_key[prompt_key(messages)]
        k = sum(1 for m in messages if m["role"] == "assistant")
        want = ta.chat(lg.row["prompt"])
        for j in range(k):
            want += [{"role": "assistant", "content": lg.turns[j]}, {"role": "user", "content": lg.flat(j)}]
        if messages != want:
            self.problems.append(f"{lg.ep['id']} turn {k + 1}: the policy does not read the conversation calibrl's agent read: {ta.differ(messages, want)}")
        return lg.turns[k] if k < len(lg.turns) else ""


def check_row(cv, out, lg, gens, problems, tag):
    """What verl trains on for one row, against the logged episode."""
    raw = out["raw"]
    resp, mask = raw.response_ids, raw.response_mask
    said = [t for t, m in zip(resp, mask) if m == 1]
    want = [t for g in gens for t in g]
    if said != want:
        problems.append(f"{tag}: the mask-1 tokens are not the {len(want)} tokens the server generated ({len(said)} of them; "
                        f"first difference at {next((i for i, (a, b) in enumerate(zip(said, want)) if a != b), min(len(said), len(want)))})")
    lps = raw.response_logprobs
    if lps is None or len(lps) != len(resp) or any(lp != (cv.fake_logprob(t) if m else 0.0) for t, m, lp in zip(resp, mask, lps)):
        problems.append(f"{tag}: response_logprobs are not the server's on the policy's tokens and 0 elsewhere "
                        f"({None if lps is None else len(lps)} for {len(resp)} tokens)")
    runs = sum(1 for i, m in enumerate(mask) if m == 1 and (i == 0 or mask[i - 1] == 0))
    if runs != len(gens):
        problems.append(f"{tag}: {runs} runs of mask 1 for {len(gens)} generations")
    if set(out["response_mask"]) - {0, 1}:
        problems.append(f"{tag}: verl's response_mask holds {sorted(set(out['response_mask']))}")
    text = cv.Tokenizer().decode(raw.prompt_ids + resp)
    got, gen = cv.parse_chatml(text)
    # The prompt, each agent turn and the user's reply as one message,
    # up to the agent's last turn (its reply ends the episode).
    full = ta.chat(lg.row["prompt"])
    for j, turn in enumerate(lg.turns):
        full.append({"role": "assistant", "content": turn})
        if j + 1 < len(lg.turns):
            full.append({"role": "user", "content": lg.flat(j)})
    if got != full or gen:
        problems.append(f"{tag}: the tokens verl trains on are not the logged conversation: {ta.differ(got, full)}")
    if raw.reward_score != lg.ep["reward"]:
        problems.append(f"{tag}: reward_score {raw.reward_score}, calibrl eval's {lg.ep['reward']}")
    rm = out.get("rm_scores")
    if rm is None or sum(rm) != cv.float32(lg.ep["reward"]):
        problems.append(f"{tag}: verl trains on reward {rm and sum(rm)}, want float32 of calibrl eval's {lg.ep['reward']}")
    if raw.num_turns != 2 * len(lg.turns):
        problems.append(f"{tag}: num_turns {raw.num_turns}, want {2 * len(lg.turns)} (the prompt, {len(lg.turns)} agent turns, the replies)")
    return raw.reward_score


def load_loop(adapters, version):
    """The stand-in installed at version, the adapter (re)imported."""
    import conformance_verl_agent_loop as cv

    cv.install(version)
    cv._agent_loop_registry.clear()
    for name in ("calibrl_verl_agent_loop", "calibrl_sabotage"):
        sys.modules.pop(name, None)
    return cv, importlib.import_module("calibrl_verl_agent_loop")


def agent_yaml(tmp, target, urls, extra=""):
    path = os.path.join(tmp, f"agent-{abs(hash((target, urls, extra)))}.yaml")
    with open(path, "w") as f:
        f.write(f"- name: calibrl_user\n  _target_: {target}\n  base_url: \"{urls}\"\n  user: human\n{extra}")
    return path


RECIPE = os.path.join(HERE, "recipe", "calibrl_agent_loop")


def recipe_checks():
    """The recipe's launch script points verl at its agent loop config and
    trainer config, and the trainer config leaves the tool loop's settings
    alone (config/agent.yaml itself is what play() loads)."""
    with open(os.path.join(RECIPE, "run_qwen2.5-0.5b_calibrl_agent_loop.sh")) as f:
        run_sh = f.read()
    for want in ('agent.agent_loop_config_path="$RECIPE_DIR/config/agent.yaml"', "--config-name=calibrl_agent_loop_grpo", 'PYTHONPATH="$ADAPTERS_DIR'):
        check(want in run_sh, f"verl agent loop recipe: the launch script lacks {want!r}")
    with open(os.path.join(RECIPE, "config", "calibrl_agent_loop_grpo.yaml")) as f:
        cfg = f.read()
    for unwanted in ("interaction_config_path", "custom_reward_function", "default_agent_loop: tool_agent"):
        check(unwanted not in cfg, f"verl agent loop recipe: the trainer config sets {unwanted!r}, which verl 0.8 does not need or have")
    check("return_raw_chat: True" in cfg, "verl agent loop recipe: the trainer config lacks return_raw_chat: True")


def play(cv, url_list, rows, eps, tmp, target="calibrl_verl_agent_loop.CalibrlAgentLoop", policy=None, response_length=3072, tag="verl agent loop",
         config=None):
    """One verl batch of the rows; returns (problems, rewards). config: an
    agent loop config file (default: one naming target at url_list)."""
    problems = []
    logs = [ta.Logged(r, e) for r, e in zip(rows, eps)]
    policy = policy or Replayer(logs, problems)
    cfg = cv.trainer_config(response_length=response_length)
    tok = cv.Tokenizer()
    sm = cv.ServerManager(policy, response_length, tok)
    worker = cv.Worker(cfg, sm, tok, agent_loop_config_path=config or agent_yaml(tmp, target, ",".join(url_list)))
    try:
        outs = asyncio.run(worker.generate_sequences(rows))
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)[-1]
        problems.append(f"{tag}: {type(e).__name__}: {e} (at {os.path.basename(tb.filename)}:{tb.lineno})")
        return problems, None
    by_key = {v["prompt"]: v["gens"] for v in sm.log.values()}
    rewards = []
    for out, lg in zip(outs, logs):
        gens = by_key.get(prompt_key(ta.chat(lg.row["prompt"])), [])
        if isinstance(policy, Replayer):
            rewards.append(check_row(cv, out, lg, gens, problems, f"{tag} {lg.ep['id']} ({lg.ep['task']})"))
        else:
            rewards.append(out["raw"].reward_score)
    for u in url_list:
        if ta.server_episodes(u):
            problems.append(f"{tag}: {ta.server_episodes(u)} episode(s) left on {u}")
    return problems, rewards


# --- broken adapters ----------------------------------------------------

def old_adapter_fails(adapters):
    """The BaseInteraction adapter under verl 0.8+: verl/interactions is gone."""
    import conformance_verl_agent_loop as cv

    cv.install()
    names = [n for n in ("calibrl_verl_v07", "calibrl_verl") if os.path.exists(os.path.join(adapters, n + ".py"))]
    if not check(names, f"no BaseInteraction adapter in {adapters} to show failing"):
        return None
    sys.modules.pop(names[0], None)
    try:
        importlib.import_module(names[0])
    except Exception as e:
        msg = f"{names[0]}.py under verl {cv.VERSION}: {type(e).__name__}: {e}"
        check(isinstance(e, ModuleNotFoundError) and "verl.interactions" in str(e), f"the old adapter failed otherwise than expected: {msg}")
        return msg
    finally:
        sys.modules.pop(names[0], None)
    check(False, f"{names[0]}.py imported under verl {cv.VERSION}, which deleted verl/interactions")
    return None


def sabotages(mod):
    """Copies of the loop, each broken in one way a real adapter could be."""
    base = mod.CalibrlAgentLoop

    class UserUnmasked(base):
        async def _append_user(self, previous, messages, tokens, mask, logprobs):
            n = len(mask)
            tokens, mask, logprobs = await super()._append_user(previous, messages, tokens, mask, logprobs)
            return tokens, mask[:n] + [1] * (len(mask) - n), logprobs

    class MaskShort(base):
        async def run(self, sampling_params, **kwargs):
            out = await super().run(sampling_params, **kwargs)
            out.response_mask = out.response_mask[:-1]
            return out

    class Reencoded(base):
        async def _append_assistant(self, tokens, out, mask, logprobs):
            text = self.tokenizer.decode(out.token_ids)  # the golden rule broken: decode, then encode
            out.token_ids = self.tokenizer.encode(text)
            out.log_probs = None
            return await super()._append_assistant(tokens, out, mask, logprobs)

    class NoScore(base):
        async def run(self, sampling_params, **kwargs):
            out = await super().run(sampling_params, **kwargs)
            out.reward_score = None
            return out

    return {"user tokens unmasked": UserUnmasked, "response_mask one short": MaskShort,
            "decoded text re-encoded": Reencoded, "no reward_score": NoScore}


def sabotage_checks(adapters, urls, rows, eps, tmp):
    cv, mod = load_loop(adapters, "1dda039")
    sab = type(sys)("calibrl_sabotage")
    sys.modules["calibrl_sabotage"] = sab
    quoted = {}
    for name, cls in sabotages(mod).items():
        cls.__module__ = "calibrl_sabotage"
        setattr(sab, cls.__name__, cls)
        problems, _ = play(cv, urls, rows, eps, tmp, target=f"calibrl_sabotage.{cls.__name__}", tag=f"sabotage {name}")
        check(problems, f"sabotage {name!r}: the stand-in found nothing wrong")
        quoted[name] = problems[0] if problems else None
    return quoted


# --- two replicas, one killed -------------------------------------------

async def kill_run(cv, mod, binary, rows, eps, tmp, concurrency=32, think=0.02, extra=""):
    ports = [ta.free_port(), ta.free_port()]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    srvs = [start_serve(binary, p) for p in ports]
    try:
        for u in urls:
            wait_up(u)
        problems = []
        logs = [ta.Logged(r, e) for r, e in zip(rows, eps)]
        policy = Replayer(logs, problems)
        tok = cv.Tokenizer()
        sm = cv.ServerManager(policy, 3072, tok)
        sm.think = think
        orig_generate = sm.generate

        async def thinking(*a, **kw):
            await asyncio.sleep(think)  # the policy takes a while to write each turn
            return await orig_generate(*a, **kw)

        sm.generate = thinking
        worker = cv.Worker(cv.trainer_config(), sm, tok, agent_loop_config_path=agent_yaml(tmp, "calibrl_verl_agent_loop.CalibrlAgentLoop", ",".join(urls), extra))
        # Timed through the client the loop calls (calibrl_client.Client):
        # a turn's latency includes its resends and their pauses. Sends
        # are counted too: every send of a call after its first is a
        # retry, which the episodes must report as calibrl_retries.
        latencies, sends, lock = [], {"calls": 0, "requests": 0}, threading.Lock()
        client_cls = mod.Client
        plain_call, plain_request = client_cls.call, client_cls._request

        def timed(self, method, path, *args, **kwargs):
            with lock:  # calls run on asyncio.to_thread's threads
                sends["calls"] += 1
            t0 = time.perf_counter()
            try:
                return plain_call(self, method, path, *args, **kwargs)
            finally:
                if path.endswith("/turns"):
                    latencies.append(time.perf_counter() - t0)

        def counted(self, base_url, method, path, *args, **kwargs):
            if method != "DELETE":  # delete is sent once, outside call
                with lock:
                    sends["requests"] += 1
            return plain_request(self, base_url, method, path, *args, **kwargs)

        client_cls.call, client_cls._request = timed, counted
        done, killed = [0], [None]
        sem = asyncio.Semaphore(concurrency)

        async def one(row):
            async with sem:
                try:
                    return (await worker.generate_sequences([row]))[0]
                finally:
                    done[0] += 1
                    if killed[0] is None and done[0] >= 0.3 * len(rows):
                        killed[0] = done[0]
                        srvs[0].send_signal(signal.SIGKILL)
                        srvs[0].wait()
                        await asyncio.sleep(0.1)
                        srvs[0] = start_serve(binary, ports[0])

        t0 = time.perf_counter()
        try:
            outs = await asyncio.gather(*[one(r) for r in rows], return_exceptions=True)
        finally:
            client_cls.call, client_cls._request = plain_call, plain_request
        wall = time.perf_counter() - t0
        lost, errors, retries = 0, {}, 0
        for out, lg in zip(outs, logs):
            if isinstance(out, BaseException):
                lost += 1
                key = f"{type(out).__name__}: {str(out)[:120]}"
                errors[key] = errors.get(key, 0) + 1
                continue
            retries += out["extra_fields"].get("calibrl_retries", 0)
            if out["raw"].reward_score != lg.ep["reward"]:
                lost += 1
                errors["reward differs from eval's"] = errors.get("reward differs from eval's", 0) + 1
        latencies.sort()
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")  # noqa: E731
        return {"episodes": len(rows), "lost": lost, "errors": errors, "retries": retries, "turns": len(latencies),
                "p50_ms": p(0.5), "p99_ms": p(0.99), "killed_after": killed[0], "wall_s": wall, "problems": problems,
                "resent": sends["requests"] - sends["calls"]}
    finally:
        for s in srvs:
            s.kill()
            s.wait()


# --- main ---------------------------------------------------------------

RUNS = [("mathchat:easy", "scripted:careful", "4", 4, 7), ("mathchat:easy", "scripted:sloppy", "3", 4, 7),
        ("docedit:easy", "scripted:careful", "5", 4, 7), ("docedit", "scripted:sloppy", "6", 4, 7), ("mathchat:h4:ledger", "scripted:careful", "6", 4, 7)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--adapters", default=HERE, help="folder of the adapter files under test")
    ap.add_argument("--kill", type=int, default=40, help="episodes in the two-replica kill test (0: skip)")
    ap.add_argument("--kill-runs", type=int, default=1)
    args = ap.parse_args()
    binary, adapters = os.path.abspath(args.binary), os.path.abspath(args.adapters)
    sys.path[:0] = [adapters]
    tmp = tempfile.mkdtemp(prefix="calibrl-verl-loop-")
    port = ta.free_port()
    url = f"http://127.0.0.1:{port}"
    srv = None
    try:
        quoted_old = old_adapter_fails(adapters)
        print(f"old adapter: {quoted_old}")
        if not check(os.path.exists(os.path.join(adapters, "calibrl_verl_agent_loop.py")),
                     f"no calibrl_verl_agent_loop.py in {adapters}: verl 0.8 and later have no calibrl adapter"):
            raise SystemExit(1)
        eps, rows = eval_rows(binary, tmp, RUNS, "logged")
        batches, lo = [], 0
        for run in RUNS:
            batches.append((lo, lo + run[3]))
            lo += run[3]
        check(all(r["agent_name"] == "calibrl_user" for r in rows), "create_dataset.py: a row without agent_name calibrl_user")
        srv = start_serve(binary, port)
        wait_up(url)

        recipe_checks()
        # An agent.yaml with the loop's earlier key names is refused by
        # name, not run with its settings dropped (AgentLoopBase takes
        # **kwargs).
        cv, mod = load_loop(adapters, "1dda039")
        problems, _ = play(cv, [url], rows[:1], eps[:1], tmp, tag="old config keys",
                           config=agent_yaml(tmp, "calibrl_verl_agent_loop.CalibrlAgentLoop", url, "  tries: 1\n"))
        check(any("'tries' is now 'attempts'" in p for p in problems), f"an agent.yaml with tries: 1 was not refused by name: {problems[:1]}")
        if ta.server_episodes(url):
            check(False, f"old config keys: {ta.server_episodes(url)} episode(s) left on the server")
        totals = {}
        for version in ("1dda039", "v0.8.0"):
            cv, mod = load_loop(adapters, version)
            check(cv._agent_loop_registry.get(mod.AGENT_NAME, {}).get("_target_") == "calibrl_verl_agent_loop.CalibrlAgentLoop",
                  f"verl {version}: @register did not put {mod.AGENT_NAME} in the registry")
            problems, rewards = [], []
            for lo, hi in batches:  # one verl batch per configuration: their openings differ
                # The recipe's own config/agent.yaml, the replica from its
                # variable; the module imported as in verl, by the first
                # row's instantiate, after the worker read the config.
                os.environ["CALIBRL_URL"] = url
                sys.modules.pop("calibrl_verl_agent_loop", None)
                cv._agent_loop_registry.clear()
                pr, rw = play(cv, [url], rows[lo:hi], eps[lo:hi], tmp, tag=f"verl {version}", config=os.path.join(RECIPE, "config", "agent.yaml"))
                problems += pr
                rewards += rw or [None] * (hi - lo)
            for p in problems:
                check(False, p)
            equal = sum(1 for r, e in zip(rewards, eps) if r == e["reward"])
            totals[version] = (equal, rewards)
            print(f"verl {version}: {equal} of {len(eps)} episodes with calibrl eval's reward (mean {sum(r or 0 for r in rewards) / len(eps):.4f}, eval {sum(e['reward'] for e in eps) / len(eps):.4f})")

        # A policy that reacts to what it reads (the ledger reader), and
        # the same agent under calibrl eval --agent remote:.
        reader_eps, reader_rows = ta.ledger_reader_episodes(binary, tmp)
        reader_rows = [dict(r, agent_name="calibrl_user") for r in reader_rows]
        cv, mod = load_loop(adapters, "1dda039")
        problems, rewards = play(cv, [url], reader_rows, reader_eps, tmp, policy=ta.ledger_reader, tag="verl ledger reader")
        for p in problems:
            check(False, p)
        for r, e in zip(rewards or [], reader_eps):
            check(r == e["reward"], f"verl ledger reader {e['id']}: reward {r}, calibrl eval's {e['reward']} for the same agent")
        equal = sum(1 for r, e in zip(rewards or [], reader_eps) if r == e["reward"])
        print(f"ledger reader: {equal} of {len(reader_eps)} episodes with calibrl eval's reward (solved {sum(1 for e in reader_eps if e['success'])})")

        # Cut: a response budget too small for the episode scores 0 and frees it.
        cv, mod = load_loop(adapters, "1dda039")
        CUT = 80  # tokens: less than any of these episodes needs
        long = [(r, e) for r, e in zip(rows, eps) if len([m for m in e["messages"] if m["role"] == "assistant"]) >= 3][:2]
        problems = []
        logs = [ta.Logged(r, e) for r, e in long]
        tok = cv.Tokenizer()
        sm = cv.ServerManager(Replayer(logs, problems), CUT, tok)
        worker = cv.Worker(cv.trainer_config(response_length=CUT), sm, tok, agent_loop_config_path=agent_yaml(tmp, "calibrl_verl_agent_loop.CalibrlAgentLoop", url))
        outs = asyncio.run(worker.generate_sequences([r for r, _ in long]))
        for out in outs:
            check(out["extra_fields"].get("calibrl_cut") is True and out["raw"].reward_score == 0.0 and len(out["raw"].response_ids) <= CUT,
                  f"cut episode: calibrl_cut {out['extra_fields'].get('calibrl_cut')}, reward {out['raw'].reward_score}, {len(out['raw'].response_ids)} tokens for a budget of {CUT}")
        check(ta.server_episodes(url) == 0, f"cut episodes: {ta.server_episodes(url)} left on the server")

        quoted = sabotage_checks(adapters, [url], rows[:3], eps[:3], tmp)
        for name, q in quoted.items():
            print(f"sabotage {name}: {q}")
        if ta.server_episodes(url):  # crashed sabotage batches leave episodes; the TTL would free them
            srv.kill()
            srv.wait()
            srv = start_serve(binary, port)
            wait_up(url)

        for run_no in range(args.kill_runs if args.kill else 0):
            keps, krows = eval_rows(binary, tmp, [("mathchat:easy", "scripted:careful", "10", args.kill + args.kill // 10 + 5, 100 + run_no)], f"kill{run_no}")
            # The replaying model tells episodes apart by their opening: keep
            # one episode per opening (two problems may read alike).
            seen, keep = set(), []
            for r, e in zip(krows, keps):
                if prompt_key(ta.chat(r["prompt"])) not in seen:
                    seen.add(prompt_key(ta.chat(r["prompt"])))
                    keep.append((r, e))
            check(len(keep) >= args.kill, f"kill test: {len(keep)} distinct openings, want {args.kill}")
            krows, keps = [r for r, _ in keep[:args.kill]], [e for _, e in keep[:args.kill]]
            cv, mod = load_loop(adapters, "1dda039")
            res = asyncio.run(kill_run(cv, mod, binary, krows, keps, tmp))
            for p in res["problems"][:5]:
                check(False, f"kill test: {p}")
            check(res["killed_after"] is not None, "kill test: the replica was never killed")
            check(res["lost"] == 0, f"kill test: {res['lost']} of {res['episodes']} episodes lost: {res['errors']}")
            # Each episode reports its own retries: together, every resend.
            check(res["lost"] or res["retries"] == res["resent"],
                  f"kill test: the episodes report {res['retries']} retries (calibrl_retries), the client resent {res['resent']} calls")
            if run_no == 0:
                # The same run without failover (one try per call) must lose
                # episodes, or the kill test shows nothing.
                cv, mod = load_loop(adapters, "1dda039")
                bad = asyncio.run(kill_run(cv, mod, binary, krows, keps, tmp, extra="  attempts: 1\n"))
                check(bad["lost"] > 0, "kill test: a loop without failover lost nothing: the test would show nothing")
                print(f"kill test without failover (attempts 1): {bad['episodes']} episodes, lost {bad['lost']}: {bad['errors']}")
            print(f"kill test run {run_no + 1}: {res['episodes']} episodes, replica 0 killed after {res['killed_after']}, lost {res['lost']}, "
                  f"retries {res['retries']}, {res['turns']} turns, p50 {res['p50_ms']:.1f} ms, p99 {res['p99_ms']:.1f} ms per turn, {res['wall_s']:.1f} s")
    finally:
        if srv is not None:
            srv.kill()
            srv.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("ok: verl's agent loop played calibrl's episodes token in, token out, and trained on calibrl eval's reward")


if __name__ == "__main__":
    main()
