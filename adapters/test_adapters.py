"""Runs the trainer adapters against a live `calibrl serve` on loopback.

Plain python3, no packages: verl's BaseInteraction and OpenRLHF's agent
base classes are stood in by classes with their exact signatures. Each
adapter plays whole episodes that `calibrl eval` logged (the logged agent
turns, the same user, the rows `calibrl export --kind prompts` wrote) and
must see the logged user replies and end with the logged reward.

    python3 adapters/test_adapters.py CALIBRL_BINARY

(scripts/test-adapters.sh builds the binary and runs this.)
"""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def stand_ins():
    """verl.interactions.base and openrlhf.utils.agent, signatures only."""

    class BaseInteraction:
        def __init__(self, config: dict):
            self.config = config
            self.name: str = config.get("name", "interaction_agent")

        async def start_interaction(self, instance_id=None, **kwargs) -> str:
            raise NotImplementedError

        async def generate_response(self, instance_id, messages, **kwargs):
            raise NotImplementedError

        async def calculate_score(self) -> float:
            raise NotImplementedError

        async def finalize_interaction(self) -> None:
            raise NotImplementedError

    class AgentInstanceBase:
        async def __init__(self, *args, **kwargs):
            pass

        async def reset(self, states: dict, **kwargs):
            raise NotImplementedError

        async def step(self, states: dict, **kwargs):
            raise NotImplementedError

    class AgentExecutorBase:
        def __init__(self, agent_instance_cls, max_steps, max_length, llm_engine, hf_tokenizer, result_queue):
            self.agent_instance_cls = agent_instance_cls

    for name in ("verl", "verl.interactions", "openrlhf", "openrlhf.utils"):
        sys.modules[name] = types.ModuleType(name)
    base = types.ModuleType("verl.interactions.base")
    base.BaseInteraction = BaseInteraction
    sys.modules["verl.interactions.base"] = base
    agent = types.ModuleType("openrlhf.utils.agent")
    agent.AgentInstanceBase, agent.AgentExecutorBase = AgentInstanceBase, AgentExecutorBase
    sys.modules["openrlhf.utils.agent"] = agent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def exchanges(ep):
    """The logged agent turns, each with the user's reply (None at the end)."""
    msgs = ep["messages"]
    out = []
    for i, m in enumerate(msgs):
        if m["role"] == "assistant":
            nxt = msgs[i + 1]["content"] if i + 1 < len(msgs) and msgs[i + 1]["role"] == "user" else None
            out.append((m["content"], nxt))
    return out


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


async def play_verl(url, row, ep):
    from calibrl_verl import CalibrlInteraction

    inter = CalibrlInteraction({"name": "calibrl", "base_url": url, "user": "human"})
    kwargs = row["extra_info"]["interaction_kwargs"]
    iid = await inter.start_interaction(None, **kwargs)
    opening = inter._instance_dict[iid]["observation"]["messages"][0]["content"]
    check(opening == ep["messages"][0]["content"] == row["prompt"][-1]["content"], f"verl {ep['id']}: opening")
    messages = list(row["prompt"])
    done, reward = False, 0.0
    for action, logged_reply in exchanges(ep):
        messages.append({"role": "assistant", "content": action})
        done, reply, reward, info = await inter.generate_response(iid, messages)
        if logged_reply is not None:
            check(reply == logged_reply, f"verl {ep['id']} turn {info['turn']}: reply {reply!r}, logged {logged_reply!r}")
        messages.append({"role": "user", "content": reply})
    check(done and reward == ep["reward"], f"verl {ep['id']}: done {done} reward {reward}, logged {ep['reward']}")
    check(await inter.calculate_score(iid) == ep["reward"], f"verl {ep['id']}: calculate_score")
    await inter.finalize_interaction(iid)
    return reward


def play_trl(url, row, ep):
    from calibrl_trl import CalibrlEnv

    env = CalibrlEnv(base_url=url)
    opening = env.reset(prompt=row["prompt"], extra_info=row["extra_info"])
    check(opening == ep["messages"][0]["content"], f"trl {ep['id']}: opening")
    public = sorted(n for n in dir(env) if not n.startswith("_") and callable(getattr(env, n)))
    check(public == ["get_reward", "reply", "reset"], f"trl: public methods {public}")
    for action, logged_reply in exchanges(ep):
        reply = env.reply(action)
        if logged_reply is not None:
            check(reply == logged_reply, f"trl {ep['id']}: reply {reply!r}, logged {logged_reply!r}")
    check(env.get_reward() == ep["reward"], f"trl {ep['id']}: reward {env.get_reward()}, logged {ep['reward']}")
    return env.get_reward()


async def play_openrlhf(url, row, ep):
    os.environ["CALIBRL_URL"] = url
    import calibrl_openrlhf

    calibrl_openrlhf._client.base_url = url
    agent = calibrl_openrlhf.AgentInstance()
    states = {"label": json.dumps(row["extra_info"]["interaction_kwargs"]), "observation": "prompt"}
    first = await agent.reset(states)
    check(first == {"observation": "prompt"}, f"openrlhf {ep['id']}: reset {first}")
    out = {}
    for action, _ in exchanges(ep):
        out = await agent.step({"observation_text": "", "action_text": action, "label": states["label"]})
    want = {"rewards", "scores", "environment_feedback", "done", "sampling_params", "extra_logs"}
    check(set(out) == want, f"openrlhf: step keys {sorted(out)}")
    check(out["done"] and out["rewards"] == ep["reward"], f"openrlhf {ep['id']}: done {out['done']} reward {out['rewards']}, logged {ep['reward']}")
    return out["rewards"]


def main():
    binary = os.path.abspath(sys.argv[1])
    stand_ins()
    sys.path.insert(0, HERE)
    tmp = tempfile.mkdtemp(prefix="calibrl-adapters-")
    logs, prompts = os.path.join(tmp, "eps.jsonl"), os.path.join(tmp, "prompts.jsonl")
    # Two levels and turn limits other than the server's, so a row that
    # lost either would open a different episode.
    runs = [("mathchat:easy", "scripted:careful", "4"), ("mathchat:easy", "scripted:sloppy", "3"), ("docedit:easy", "scripted:careful", "5")]
    eps = []
    for task, agent, turns in runs:
        part = os.path.join(tmp, f"{len(eps)}.jsonl")
        subprocess.run([binary, "eval", "--task", task, "--agent", agent, "--user", "human", "-n", "5", "--max-turns", turns,
                        "--seed", "7", "--episodes-out", part], check=True, capture_output=True)
        eps += read_jsonl(part)
    with open(logs, "w") as f:
        for ep in eps:
            f.write(json.dumps(ep) + "\n")
    subprocess.run([binary, "export", "--logs", logs, "--kind", "prompts", "--out", prompts], check=True, capture_output=True)
    rows = read_jsonl(prompts)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    srv = subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--max-turns", "10"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        totals = {"eval": 0.0, "verl": 0.0, "trl": 0.0, "openrlhf": 0.0}
        for row, ep in zip(rows, eps):
            totals["eval"] += ep["reward"]
            totals["verl"] += asyncio.run(play_verl(url, row, ep))
            totals["trl"] += play_trl(url, row, ep)
            totals["openrlhf"] += asyncio.run(play_openrlhf(url, row, ep))
        print(f"{len(eps)} episodes ({', '.join(t + ' ' + a + ' max ' + n for t, a, n in runs)})")
        for k, v in totals.items():
            print(f"  mean reward {k:9s} {v / len(eps):.4f}")
    finally:
        srv.terminate()
        srv.wait(timeout=30)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("ok: every adapter saw the logged replies and rewards")


if __name__ == "__main__":
    main()
