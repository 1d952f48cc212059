"""Two `calibrl serve` replicas on loopback, one killed mid-run: no episode lost.

Plain python3, no packages. For each shipped adapter (driven by its
trainer's stand-in) and for the remote: user, N episodes are played
concurrently against two replicas named in one base URL list
(calibrl_client: each turn carries the conversation; a call whose
replica is gone goes to the other after a backoff); once a third of them
have finished, the second replica is killed (SIGKILL). An episode is lost
when its rollout raised or its reward is not the expected one: calibrl
eval's for the human proxy (the logged episodes' agent turns are
replayed), and for remote:calibrl-sim (an OpenAI-compatible stand-in
whose replies are a function of the request's seed and conversation) the
reward of the same rollout on one replica that nobody killed. Two
routings for the remote: user: sticky (each episode stays on the replica
that answered it last) and alternating (every request goes to the other
replica, as a round-robin balancer sends it).

    python3 adapters/test_replicas.py CALIBRL_BINARY [--episodes N] [--adapters DIR]

Prints one line per run: episodes lost, calls sent again, p99 of a turn's
latency (ms). Fails when an episode is lost.
"""

import argparse
import asyncio
import concurrent.futures
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from test_adapters import free_port, serve_chat

HERE = os.path.dirname(os.path.abspath(__file__))


def sim_endpoint():
    """calibrl-sim: replies by the request's seed and conversation, in the
    simulator's format; ends when the agent states an answer."""

    def reply(req):
        msgs = req["messages"]
        last = msgs[-1]["content"] if msgs else ""
        h = hashlib.sha256(json.dumps([req.get("seed"), msgs]).encode()).hexdigest()[:6]
        return json.dumps({"message": f"The first number is {int(h, 16) % 9 + 1}.", "end": "The answer is" in last, "satisfied": False})

    # The killed replica's requests break off: expected.
    return serve_chat(reply, broken_off_ok=True)


class Replicas:
    def __init__(self, binary, sim_url, n, tmp):
        self.procs, self.urls = [], []
        for i in range(n):
            port = free_port()
            self.procs.append(subprocess.Popen([binary, "serve", "--addr", f"127.0.0.1:{port}", "--users", "human,remote:calibrl-sim",
                                                "--remote-url", sim_url, "--max-turns", "10"],
                                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, f"serve{port}.log"), "w")))
            self.urls.append(f"http://127.0.0.1:{port}")
        for u in self.urls:
            for _ in range(200):
                try:
                    urllib.request.urlopen(u + "/healthz", timeout=2)
                    break
                except OSError:
                    time.sleep(0.05)

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait(10)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                p.wait(30)


class Timed:
    """Wraps a client's requests: each turn's latency, and a routing."""

    def __init__(self, client, alternate=False):
        self.lat, self.n = [], 0
        lock = threading.Lock()
        if not hasattr(type(client), "_request"):
            self._balanced(client, lock)
            return
        plain = type(client)._request

        def request(c, base_url, method, path, body=None):
            with lock:
                self.n += 1
                k = self.n
            if alternate:
                base_url = c.base_urls[k % len(c.base_urls)]
            return plain(c, base_url, method, path, body)

        client._request = request.__get__(client)
        orig_call = client.call

        def call(method, path, body=None, replica=0):
            t0 = time.perf_counter()
            try:
                return orig_call(method, path, body, replica)
            finally:
                if path.endswith("/turns"):
                    with lock:
                        self.lat.append(time.perf_counter() - t0)

        client.call = call


    def _balanced(self, client, lock):
        """An older client (one base URL, no retries) behind a balancer in
        front of the replicas: creates in turn, an episode's requests
        sticky to the replica that created it."""
        urls = BALANCED[0]
        plain = type(client)._call
        home = {}

        def call(c, method, path, body=None):
            with lock:
                self.n += 1
                k = self.n
            eid = path.split("/")[3] if path.startswith("/v1/episodes/") else None
            c = _Shadow(c, urls[home.get(eid, k % len(urls))])
            t0 = time.perf_counter()
            try:
                out = plain(c, method, path, body)
            finally:
                if path.endswith("/turns"):
                    with lock:
                        self.lat.append(time.perf_counter() - t0)
            if eid is None and isinstance(out, dict) and "id" in out:
                home[out["id"]] = k % len(urls)
            return out

        client._call = call.__get__(client)


class _Shadow:
    """A client seen with another base URL (for one call)."""

    def __init__(self, c, url):
        self.__dict__.update(c.__dict__)
        self.base_url = url


BALANCED = [[]]


def p99(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.99 * len(xs)))] * 1000 if xs else float("nan")


def logged_model(log):
    turns = [m["content"] for m in log["messages"] if m["role"] == "assistant"]
    return turns


def run_trl(ct, calibrl_trl, urls, user, rows, logs, kill, alternate):
    """TRL (f2cd577) through the stand-in: one rollout per thread."""
    results, clients = [None] * len(rows), []
    lock = threading.Lock()
    done = [0]

    def one(i):
        env = calibrl_trl.CalibrlEnv(base_url=",".join(urls), user=user)
        with lock:
            clients.append(Timed(env._client, alternate))
            timed = clients[-1]
        turns = logged_model(logs[i])

        def model(messages, tools):
            k = sum(1 for m in messages if m["role"] == "tool")
            if k < len(turns) and not (k and messages[-1]["content"].startswith("(The user has left")):
                return {"content": "", "tool_calls": [ct.tool_call("reply", {"message": turns[k]})]}
            return {"content": "Thank you."}

        funcs = ct.probe(lambda: env, "1.8", [])
        try:
            ct.rollout(env, dict(rows[i]), model, "1.8")
            results[i] = (ct.rewards(funcs, [env], [rows[i]["prompt"]], [[]])[0], getattr(env._client, "retries", 0), timed)
        except Exception as e:  # noqa: BLE001 -- a lost episode
            results[i] = (f"{type(e).__name__}: {e}", getattr(env._client, "retries", 0), timed)
        with lock:
            done[0] += 1
            if done[0] == len(rows) // 3:
                kill()

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(len(rows))))
    return results


def play_concurrently(n, episode, kill):
    """Plays episodes 0..n-1 on one event loop, 16 at a time: episode(i)
    is a coroutine that returns the episode's reward; one that raises is a
    lost episode, kept as its error's text. Once a third of them have
    finished, kill() (off the loop) stops the second replica. Returns the
    rewards in episode order."""
    done = [0]

    async def one(i, sem):
        async with sem:
            try:
                r = await episode(i)
            except Exception as e:  # noqa: BLE001 -- a lost episode
                r = f"{type(e).__name__}: {e}"
        done[0] += 1
        if done[0] == n // 3:
            await asyncio.to_thread(kill)
        return r

    async def all_():
        sem = asyncio.Semaphore(16)
        return await asyncio.gather(*[one(i, sem) for i in range(n)])

    return asyncio.run(all_())


def run_openrlhf(co, adapters, urls, user, rows, logs, kill):
    os.environ.update(CALIBRL_URL=",".join(urls), CALIBRL_USER=user)
    module = co.load_agent_module(os.path.join(adapters, "calibrl_openrlhf.py"))
    executor = co.load_agent_executor(module)
    timed = Timed(module._client)
    tok = co.ChatMLTokenizer()

    async def episode(i):
        turns = logged_model(logs[i])
        prompt, label = co.preprocess_data(rows[i], "prompt", "label", tok)
        k = [0]

        def model(text):
            k[0] += 1
            return turns[k[0] - 1] + "<|im_end|>" if k[0] <= len(turns) else ""

        out = await executor.execute(prompt=prompt, label=label, sampling_params=co.SamplingParams(), max_length=1 << 20,
                                     hf_tokenizer=tok, llm_engine=co.Engine(model, tok), images=None)
        return co.experience_info(out)["reward"].item()

    rewards = play_concurrently(len(rows), episode, kill)
    return [(r, getattr(module._client, "retries", 0), timed) for r in rewards]


def run_verl(cv, adapters, urls, user, rows, logs, kill):
    # calibrl_verl.py before the agent loop came (verl 0.8) and took the name.
    name = "calibrl_verl_v07" if os.path.exists(os.path.join(adapters, "calibrl_verl_v07.py")) else "calibrl_verl"
    inter = cv.interaction_from_config([{"name": "calibrl", "class_name": f"{name}.CalibrlInteraction",
                                         "config": {"base_url": ",".join(urls), "user": user}}])
    client = inter["calibrl"].client
    timed = Timed(client)
    fn = cv.custom_reward_fn(os.path.join(adapters, "calibrl_verl_reward.py"), "compute_score")

    async def episode(i):
        turns = logged_model(logs[i])
        k = [0]

        def model(messages):
            k[0] += 1
            return turns[k[0] - 1] if k[0] <= len(turns) else ""

        mt = rows[i]["extra_info"]["interaction_kwargs"].get("max_turns") or 10
        messages, scores, _, num_turns = await cv.run_tool_agent_loop(inter, rows[i], model, max_assistant_turns=mt + 1)
        return cv.reward_loop_score(rows[i], scores, num_turns, fn, messages[-1]["content"])

    return [(r, getattr(client, "retries", 0), timed) for r in play_concurrently(len(rows), episode, kill)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--episodes", type=int, default=260)
    ap.add_argument("--adapters", default=HERE)
    args = ap.parse_args()
    binary, adapters = os.path.abspath(args.binary), os.path.abspath(args.adapters)
    sys.path[:0] = [adapters, HERE]
    import conformance_openrlhf as co
    import conformance_trl as ct
    import conformance_verl as cv

    cv.install()
    co.install()
    import calibrl_trl

    tmp = tempfile.mkdtemp(prefix="calibrl-replicas-")
    n = args.episodes
    logs_path, rows_path = os.path.join(tmp, "eps.jsonl"), os.path.join(tmp, "rows.jsonl")
    subprocess.run([binary, "eval", "--task", "mathchat:easy", "--agent", "scripted:careful", "--user", "human", "-n", str(n),
                    "--max-turns", "6", "--seed", "3", "--episodes-out", logs_path], check=True, capture_output=True)
    subprocess.run([binary, "export", "--logs", logs_path, "--kind", "prompts", "--out", rows_path], check=True, capture_output=True)
    logs = [json.loads(line) for line in open(logs_path)]
    rows = [json.loads(line) for line in open(rows_path)]
    sim = sim_endpoint()
    sim_url = f"http://127.0.0.1:{sim.server_address[1]}/v1"
    failures = []
    table = []

    def one_run(name, user, fn, expected):
        reps = Replicas(binary, sim_url, 2, tmp)
        BALANCED[0] = reps.urls
        try:
            t0 = time.time()
            res = fn(reps.urls, user, lambda: reps.kill(1))
            secs = time.time() - t0
        finally:
            reps.close()
        lost = [i for i, (r, _, _) in enumerate(res) if r != expected[i]]
        timed = {id(t): t for _, _, t in res}.values()
        retries = sum({id(t): r for _, r, t in res}.values())
        lat = [x for t in timed for x in t.lat]
        table.append((name, len(res), len(lost), retries, p99(lat), secs))
        for i in lost[:3]:
            print(f"  {name} episode {i} lost: got {res[i][0]!r}, want {expected[i]!r}")
        if lost:
            failures.append(f"{name}: {len(lost)} of {len(res)} episodes lost")
        return [r for r, _, _ in res]

    try:
        want = [log["reward"] for log in logs]
        one_run("verl BaseInteraction (verl < 0.8), human", "human", lambda urls, u, kill: run_verl(cv, adapters, urls, u, rows, logs, kill), want)
        one_run("TRL, human", "human", lambda urls, u, kill: run_trl(ct, calibrl_trl, urls, u, rows, logs, kill, False), want)
        one_run("OpenRLHF, human", "human", lambda urls, u, kill: run_openrlhf(co, adapters, urls, u, rows, logs, kill), want)
        # The remote: user's rewards on one replica nobody kills.
        reps = Replicas(binary, sim_url, 1, tmp)
        BALANCED[0] = reps.urls
        try:
            ref = [r for r, _, _ in run_trl(ct, calibrl_trl, reps.urls, "remote:calibrl-sim", rows, logs, lambda: None, False)]
        finally:
            reps.close()
        if any(isinstance(r, str) for r in ref):
            failures.append("remote: reference run failed: " + next(r for r in ref if isinstance(r, str)))
        one_run("remote:calibrl-sim via TRL, sticky", "remote:calibrl-sim", lambda urls, u, kill: run_trl(ct, calibrl_trl, urls, u, rows, logs, kill, False), ref)
        one_run("remote:calibrl-sim via TRL, alternating", "remote:calibrl-sim", lambda urls, u, kill: run_trl(ct, calibrl_trl, urls, u, rows, logs, kill, True), ref)
    finally:
        sim.shutdown()
    print(f"{'run':45s} {'episodes':>8s} {'lost':>5s} {'retries':>7s} {'p99 ms':>7s} {'s':>5s}")
    for name, eps, lost, retries, p, secs in table:
        print(f"{name:45s} {eps:8d} {lost:5d} {retries:7d} {p:7.1f} {secs:5.1f}")
    if failures:
        print("FAIL: " + "; ".join(failures))
        sys.exit(1)
    print("ok: no episode lost to the killed replica")


if __name__ == "__main__":
    main()
