"""docs/scale.md followed as written, with the trainers' stand-ins.

Plain python3, no packages. The page's shell steps 1, 2, 5, 6 and 7 are
read from docs/scale.md itself and run as written, with only what the
page says to replace replaced (hosts, the token) and the sizes cut down
(-n); steps 3 and 4 (the simulator's SFT and vLLM on a GPU) are stood in
by an OpenAI-compatible endpoint serving `calibrl-sim` (it answers in the
simulator's reply format, by the request's seed and conversation). Step
8 trains against the user the page names (`remote:calibrl-sim`) on the
rows step 7 exported, rows collected against the human proxy, through
each adapter driven by its trainer's stand-in:

  - 8a, verl 0.8 and later: the subsection's commands (export, then
    create_dataset.py) and its export line as written, the recipe's
    config/agent.yaml and trainer lengths as its launch script names
    them, each row of train.jsonl one rollout of verl's agent loop
    (conformance_verl_agent_loop.py);
  - 8a, verl before 0.8: its export line, the v07 recipe's interaction
    config, reward function and max_assistant_turns as its launch script
    names them, each row one rollout of the tool agent loop with the
    interaction (conformance_verl.py);
  - 8b, TRL 1.8 and 0.29 (conformance_trl.py), with the snippet's user;
  - 8c, OpenRLHF (conformance_openrlhf.py), with its CALIBRL_USER.

Every row must open (0 refused), the agent must read the row's opening,
the simulator must continue from that opening (the openings in its
requests are the rows', not its own), the first reply must be the
simulator's, and every rollout must end with the server's reward.

    python3 adapters/test_scale_path.py CALIBRL_BINARY [--adapters DIR] [--rows N]
"""

import argparse
import asyncio
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from test_adapters import serve_chat

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sim_endpoint():
    """calibrl-sim behind an OpenAI-compatible /v1/chat/completions: the
    reply is a function of the request's seed and messages, in the
    simulator's format ({"message", "end", "satisfied"}); it ends the
    conversation when the agent states an answer."""

    openings = []  # the user's opening each request continues from, in order

    def reply(req):
        msgs = req["messages"]
        # The role-played chat: the user's prompt, the opening cue, then
        # the user's own turns as assistant replies in JSON.
        if len(msgs) > 2 and msgs[2]["role"] == "assistant":
            try:
                openings.append(json.loads(msgs[2]["content"])["message"])
            except (ValueError, KeyError, TypeError):
                openings.append(msgs[2]["content"])
        last = msgs[-1]["content"] if msgs else ""
        h = hashlib.sha256(json.dumps([req.get("seed"), msgs]).encode()).hexdigest()[:6]
        if "The answer is" in last:
            out = {"message": "Thanks, that settles it.", "end": True, "satisfied": True}
        else:
            out = {"message": f"I am not sure which number you need ({h}).", "end": False, "satisfied": False}
        return json.dumps(out)

    srv = serve_chat(reply)
    srv.openings = openings
    return srv


# What the simulator stand-in says when the agent has not answered yet:
# a rollout whose first reply is not this was not played against it.
SIM_REPLY = "I am not sure which number you need"


def steps(page):
    """The shell commands of each numbered step: {"1": [cmd, ...], ...},
    continuation lines joined, comments left out."""
    out, step = {}, None
    for block in re.split(r"^## ", page, flags=re.M)[1:]:
        m = re.match(r"(\d+)[a-z]?\. ", block)
        if not m:
            continue
        step = m.group(1)
        for code in re.findall(r"```sh\n(.*?)```", block, re.S):
            cmds = [c.strip() for c in code.replace("\\\n", " ").splitlines() if c.strip() and not c.strip().startswith("#")]
            out.setdefault(step, []).extend(cmds)
    return out


def subsection(page, heading):
    """The shell commands under a ### heading, up to the next heading."""
    m = re.search(rf"^### {re.escape(heading)}\n(.*?)(?=^##)", page, re.S | re.M)
    if not m:
        return None
    cmds = []
    for code in re.findall(r"```sh\n(.*?)```", m.group(1), re.S):
        cmds += [c.strip() for c in code.replace("\\\n", " ").splitlines() if c.strip() and not c.strip().startswith("#")]
    return cmds


def exported(cmds, host, token):
    """The variables a subsection's `export` line sets, with the page's
    hosts and token replaced by the test's."""
    env = {}
    for cmd in cmds:
        if cmd.startswith("export "):
            for word in shlex.split(cmd)[1:]:
                k, _, v = word.partition("=")
                env[k] = token if v == "..." else re.sub(r"CALIBRL_HOST(_\d+)?:8080", host, v)
    return env


def sized(cmd, n):
    """A step's command cut to n episodes."""
    return re.sub(r"(^|\s)-n \d+", rf"\1-n {n}", cmd)


def policy_turn(k):
    """The policy's k-th turn: ask once, then answer (the simulator
    stand-in ends the conversation on an answer)."""
    return "Which numbers do you have?" if k == 0 else "The answer is 4."


def launch(cmds, tmp):
    """A verl subsection's launch line: (its variables, the recipe folder
    of the script it runs), $PWD being tmp."""
    for cmd in cmds:
        words = shlex.split(cmd)
        scripts = [w for w in words if w.endswith(".sh")]
        if scripts:
            env = dict(w.split("=", 1) for w in words if "=" in w and not w.endswith(".sh"))
            return {k: v.replace("$PWD", tmp) for k, v in env.items()}, os.path.dirname(os.path.join(tmp, scripts[0]))
    return None, None


def run_page_commands(cmds, binary, tmp, env, check, tag):
    """A subsection's calibrl and python3 commands, run as written in tmp
    (where adapters/ is the adapters under test)."""
    for cmd in cmds:
        argv = shlex.split(cmd)
        if argv[0] == "calibrl":
            argv[0] = binary
        elif argv[0] == "python3":
            argv[0] = sys.executable
        else:
            continue
        r = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
        check(r.returncode == 0, f"{tag}: {cmd}: exit {r.returncode}: {r.stderr[-400:]}")


def page_env(env):
    """The process's CALIBRL_* variables as a page's export line leaves
    them: only what it sets."""
    for k in [k for k in os.environ if k.startswith("CALIBRL_")]:
        del os.environ[k]
    os.environ.update(env)


def sim_read_openings(sim, start, rows, played, check, tag):
    """The simulator continued, in the requests since start, from the
    openings of the rows played and from nothing else."""
    seen = set(sim.openings[start:])
    want = {r["prompt"][-1]["content"] for r in played}
    foreign = seen - {r["prompt"][-1]["content"] for r in rows}
    check(not foreign, f"{tag}: the simulator continued from {len(foreign)} opening(s) no row holds, e.g. {sorted(foreign)[0][:80]!r}: "
                       "the agent read the row's opening, the user another" if foreign else "")
    check(want <= seen, f"{tag}: {len(want - seen)} of {len(want)} played rows' openings never reached the simulator")


def verl_agent_loop(page, binary, tmp, host, token, sim, rows, check):
    """Step 8a, verl 0.8 and later, as the page writes it: its commands
    turn step 7's logs into train.jsonl (create_dataset.py), its export
    line sets the variables, and the recipe's launch script names the agent
    loop config and the trainer config whose lengths apply. Each row of
    train.jsonl is one rollout through verl's agent loop (the stand-in of
    conformance_verl_agent_loop.py). Returns (user, refused, played)."""
    import conformance_verl_agent_loop as cva

    tag = "verl agent loop"
    cmds = subsection(page, "verl 0.8 and later: the agent loop")
    if not check(cmds, f"{tag}: scale.md has no commands under \"verl 0.8 and later: the agent loop\""):
        return None, len(rows), 0
    env = exported(cmds, host, token)
    run_page_commands(cmds, binary, tmp, dict(os.environ, **env), check, tag)
    files, recipe = launch(cmds, tmp)
    if not check(files and os.path.exists(os.path.join(recipe, "config")), f"{tag}: the page runs no recipe script, or {recipe} has no config"):
        return env.get("CALIBRL_USER"), len(rows), 0
    with open(os.path.join(recipe, os.path.basename(launch_script(cmds)))) as f:
        script = f.read()
    config = re.search(r'agent_loop_config_path="\$RECIPE_DIR/([^"]+)"', script)
    trainer = re.search(r"--config-name=(\S+)", script)
    check(config and trainer, f"{tag}: the launch script names no agent loop config or trainer config")
    with open(os.path.join(recipe, "config", trainer.group(1) + ".yaml")) as f:
        cfg = f.read()
    prompt_len = int(re.search(r"max_prompt_length: (\d+)", cfg).group(1))
    response_len = int(re.search(r"max_response_length: (\d+)", cfg).group(1))
    train = [json.loads(line) for line in open(files["TRAIN_FILES"])] if os.path.exists(files.get("TRAIN_FILES", "")) else []
    check(len(train) == len(rows), f"{tag}: TRAIN_FILES {files.get('TRAIN_FILES')} holds {len(train)} rows, step 7 collected {len(rows)}")
    page_env(env)

    cva.install()
    cva._agent_loop_registry.clear()
    sys.modules.pop("calibrl_verl_agent_loop", None)
    tok = cva.Tokenizer()
    sm = cva.ServerManager(lambda messages: policy_turn(sum(1 for m in messages if m["role"] == "assistant")), response_len, tok)
    worker = cva.Worker(cva.trainer_config(prompt_length=prompt_len, response_length=response_len), sm, tok,
                        agent_loop_config_path=os.path.join(recipe, config.group(1)))
    start = len(sim.openings)

    async def all_rows():
        return await asyncio.gather(*[worker.generate_sequences([row]) for row in train], return_exceptions=True)

    refused, played = 0, []
    for row, out in zip(train, asyncio.run(all_rows())):
        if isinstance(out, BaseException):
            refused += 1
            print(f"{tag} row {row['extra_info']['index']} refused: {type(out).__name__}: {out}")
            continue
        out = out[0]
        played.append(row)
        raw = out["raw"]
        conv, _ = cva.parse_chatml(tok.decode(raw.prompt_ids + raw.response_ids))
        prompt = [{"role": m["role"], "content": m["content"]} for m in row["prompt"]]
        check(conv[:len(prompt)] == prompt, f"{tag}: the policy reads {conv[:len(prompt)]!r:.120}, not the row's prompt")
        first = conv[len(prompt) + 1]["content"] if len(conv) > len(prompt) + 1 else ""
        check(SIM_REPLY in first, f"{tag}: the first reply {first[:80]!r} is not the simulator's: not played against {env.get('CALIBRL_USER')}")
        check(raw.reward_score in (0.0, 1.0) and not out["extra_fields"].get("calibrl_cut") and "rm_scores" in out,
              f"{tag}: reward_score {raw.reward_score}, cut {out['extra_fields'].get('calibrl_cut')}")
    sim_read_openings(sim, start, train, played, check, tag)
    return env.get("CALIBRL_USER"), refused, len(played)


def launch_script(cmds):
    for cmd in cmds:
        for w in shlex.split(cmd):
            if w.endswith(".sh"):
                return w
    return None


def verl_interaction(page, tmp, host, token, sim, rows, check):
    """Step 8a, verl before 0.8, as the page writes it: its export line,
    and the recipe its launch script runs (the interaction config, the
    reward function and multi_turn.max_assistant_turns it sets). The rows
    are step 7's (train.parquet, here its JSON export), each one rollout
    of verl's tool agent loop with the interaction (the stand-in of
    conformance_verl.py). Returns (user, refused, played)."""
    import conformance_verl as cvi

    tag = "verl interaction"
    cmds = subsection(page, "verl before 0.8: the interaction")
    if not check(cmds, f"{tag}: scale.md has no commands under \"verl before 0.8: the interaction\""):
        return None, len(rows), 0
    env = exported(cmds, host, token)
    files, recipe = launch(cmds, tmp)
    if not check(files and os.path.exists(os.path.join(recipe, "config")), f"{tag}: the page runs no recipe script, or {recipe} has no config"):
        return env.get("CALIBRL_USER"), len(rows), 0
    check(os.path.exists(files.get("TRAIN_FILES", "")), f"{tag}: TRAIN_FILES {files.get('TRAIN_FILES')} was not written by step 7")
    with open(os.path.join(recipe, os.path.basename(launch_script(cmds)))) as f:
        script = f.read()
    inter_path = re.search(r'interaction_config_path="\$RECIPE_DIR/([^"]+)"', script)
    reward_path = re.search(r'custom_reward_function\.path="\$ADAPTERS_DIR/([^"]+)"', script)
    trainer = re.search(r"--config-name=(\S+)", script)
    if not check(inter_path and reward_path and trainer, f"{tag}: the launch script names no interaction config, reward function or trainer config"):
        return env.get("CALIBRL_USER"), len(rows), 0
    with open(os.path.join(recipe, "config", trainer.group(1) + ".yaml")) as f:
        max_turns = int(re.search(r"max_assistant_turns: (\d+)", f.read()).group(1))
    page_env(env)

    cvi.install()
    sys.modules.pop("calibrl_verl_v07", None)
    inter = cvi.interaction_from_config(cvi.load_interaction_config(os.path.join(recipe, inter_path.group(1))))
    fn = cvi.custom_reward_fn(os.path.join(recipe, "..", "..", reward_path.group(1)), "compute_score")
    start = len(sim.openings)

    async def one(row):
        model = lambda messages: policy_turn(sum(1 for m in messages if m["role"] == "assistant"))  # noqa: E731
        messages, scores, _, num_turns = await cvi.run_tool_agent_loop(inter, row, model, max_assistant_turns=max_turns)
        return messages, cvi.reward_loop_score(row, scores, num_turns, fn, messages[-1]["content"])

    async def all_rows():
        return await asyncio.gather(*[one(row) for row in rows], return_exceptions=True)

    refused, played = 0, []
    for row, out in zip(rows, asyncio.run(all_rows())):
        if isinstance(out, BaseException):
            refused += 1
            print(f"{tag} row {row['extra_info']['index']} refused: {type(out).__name__}: {out}")
            continue
        played.append(row)
        messages, reward = out
        n = len(row["prompt"])
        first = messages[n + 1]["content"] if len(messages) > n + 1 else ""
        check(SIM_REPLY in first, f"{tag}: the first reply {first[:80]!r} is not the simulator's: not played against {env.get('CALIBRL_USER')}")
        check(reward in (0.0, 1.0), f"{tag}: reward {reward}")
    sim_read_openings(sim, start, rows, played, check, tag)
    return env.get("CALIBRL_USER"), refused, len(played)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--adapters", default=HERE)
    ap.add_argument("--rows", type=int, default=10, help="rows step 7 collects and step 8 trains on")
    args = ap.parse_args()
    binary, adapters = os.path.abspath(args.binary), os.path.abspath(args.adapters)
    sys.path[:0] = [adapters, HERE]
    import conformance_openrlhf as co
    import conformance_trl as ct

    co.install()
    page = open(os.path.join(ROOT, "docs", "scale.md")).read()
    st = steps(page)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)
        return cond

    tmp = tempfile.mkdtemp(prefix="calibrl-scale-")
    sim = sim_endpoint()
    gpu_host = f"127.0.0.1:{sim.server_address[1]}"
    port = free_port()
    token = "scale-path-token"
    env = dict(os.environ, CALIBRL_TOKEN=token, OPENAI_BASE_URL=f"http://{gpu_host}/v1")
    env.pop("CALIBRL_REMOTE_CONFIG", None)
    server = None
    try:
        def run(cmd, n):
            cmd = sized(cmd, n).replace("GPU_HOST:8000", gpu_host).replace("0.0.0.0:8080", f"127.0.0.1:{port}")
            argv = shlex.split(cmd)
            if argv[0] != "calibrl":
                return None
            argv[0] = binary
            return argv

        for step, n in (("1", 8), ("2", None), ("5", 4), ("7", args.rows)):
            for cmd in st.get(step, []):
                if cmd.startswith("export ") and "CALIBRL_TOKEN=$(" in cmd:
                    continue
                if cmd.startswith("export OPENAI_BASE_URL"):
                    continue
                argv = run(cmd, n if n is not None else 1)
                check(argv is not None, f"step {step}: {cmd!r} is not a calibrl command")
                r = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
                check(r.returncode == 0, f"step {step}: {' '.join(argv[1:])}: exit {r.returncode}: {r.stderr[-400:]}")
        for f in ("logs.jsonl", "sim_sft.jsonl", "rl_logs.jsonl", "train.parquet", "val.parquet"):
            check(os.path.exists(os.path.join(tmp, f)), f"the steps did not write {f}")
        # The stand-ins read rows as JSON: the rows of step 7's parquet,
        # exported again from the same logs.
        rows_path = os.path.join(tmp, "train.jsonl")
        subprocess.run([binary, "export", "--logs", os.path.join(tmp, "rl_logs.jsonl"), "--kind", "prompts", "--out", rows_path], check=True, capture_output=True)
        rows = [json.loads(line) for line in open(rows_path)]
        check(len(rows) == args.rows, f"step 7 exported {len(rows)} rows, want {args.rows}")

        # Step 6: the service, as written.
        serve = [run(c, 1) for c in st.get("6", []) if c.startswith("calibrl serve")]
        check(len(serve) == 1, f"step 6 has {len(serve)} serve commands")
        server = subprocess.Popen(serve[0], env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "serve.log"), "w"))
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/healthz", timeout=2)
                break
            except OSError:
                time.sleep(0.05)

        # Step 8: the user the page trains against.
        trl_user = re.search(r'CalibrlEnv\(base_url="[^"]*", user="([^"]+)"\)', page)
        orl_user = re.search(r"^## 8c.*?CALIBRL_USER=(\S+)", page, re.S | re.M)
        check(trl_user and orl_user, "scale.md's step 8 names no training user")
        trl_user, orl_user = trl_user.group(1), orl_user.group(1)
        os.environ.update(CALIBRL_TOKEN=token, CALIBRL_URL=url, CALIBRL_USER=orl_user)
        import calibrl_trl

        refused = {"trl 1.8": 0, "trl 0.29": 0, "openrlhf": 0}
        played = dict.fromkeys(refused, 0)
        users = {"trl 1.8": trl_user, "trl 0.29": trl_user, "openrlhf": orl_user}

        # TRL: one pooled trainer per version, rows in batches of 4.
        for version in ("1.8", "0.29"):
            cls = calibrl_trl.CalibrlEnv if version == "1.8" else calibrl_trl.LegacyCalibrlEnv
            funcs = [] if version == "1.8" else [calibrl_trl.reward]
            trainer = ct.Trainer(lambda: cls(base_url=url, user=trl_user), version, funcs)

            def model(messages, tools):
                k = sum(1 for m in messages if m["role"] == "tool")
                if k < 2:
                    return {"content": "", "tool_calls": [ct.tool_call("reply", {"message": policy_turn(k)})]}
                return {"content": "Done."}

            for b in range(0, len(rows), 4):
                batch = rows[b:b + 4]
                try:
                    convs, rewards = trainer.step(batch, model)
                except Exception as e:  # a refused row: the trainer stops
                    refused[f"trl {version}"] += len(batch)
                    print(f"trl {version} rows {b}..{b + len(batch) - 1} refused: {type(e).__name__}: {e}")
                    continue
                for row, conv, reward in zip(batch, convs, rewards):
                    played[f"trl {version}"] += 1
                    check(conv[1]["content"] == row["prompt"][-1]["content"], f"trl {version}: the agent reads {conv[1]['content'][:60]!r}, not the row's opening")
                    check(reward == 1.0 or reward == 0.0, f"trl {version}: reward {reward}")

        # OpenRLHF: the module loaded by path, rows by prompt and label.
        module = co.load_agent_module(os.path.join(adapters, "calibrl_openrlhf.py"))
        executor = co.load_agent_executor(module)
        tok = co.ChatMLTokenizer()
        for row in rows:
            prompt, label = co.preprocess_data(row, "prompt", "label", tok)
            k = [0]

            def model(text):
                k[0] += 1
                return policy_turn(k[0] - 1) + "<|im_end|>"

            try:
                outs = asyncio.run(co.generate_responses(executor, prompt, label, co.SamplingParams(), 1 << 16, tok, co.Engine(model, tok), 2))
            except Exception as e:
                refused["openrlhf"] += 1
                print(f"openrlhf row {row['extra_info']['index']} refused: {type(e).__name__}: {e}")
                continue
            for out in outs:
                played["openrlhf"] += 1
                check(co.parse_chatml(out["observation_text"])[1]["content"] == row["prompt"][-1]["content"], "openrlhf: the rollout does not start from the row's opening")
        # verl: the page's step 8a, both adapters, each with the
        # variables its own export line sets.
        os.symlink(adapters, os.path.join(tmp, "adapters"))
        host = f"127.0.0.1:{port}"
        for name, play in (("verl agent loop", lambda: verl_agent_loop(page, binary, tmp, host, token, sim, rows, check)),
                           ("verl interaction", lambda: verl_interaction(page, tmp, host, token, sim, rows, check))):
            try:
                users[name], refused[name], played[name] = play()
            except Exception as e:  # noqa: BLE001 -- a broken adapter or page: every row counts as refused
                users[name], refused[name], played[name] = os.environ.get("CALIBRL_USER"), args.rows, 0
                check(False, f"{name}: {type(e).__name__}: {e}")
        with urllib.request.urlopen(url + "/healthz") as r:
            left = json.load(r)["episodes"]
        check(left == 0, f"{left} episodes left on the server after training")
        for name in refused:
            print(f"scale path, {name} against {users[name]}: {refused[name]} of {args.rows} rows refused, {played[name]} rollouts played")
            check(refused[name] == 0, f"{name}: {refused[name]} rows refused")
    finally:
        if server is not None:
            server.terminate()
            server.wait(30)
        sim.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("ok: docs/scale.md's steps 1, 2, 5-8 ran as written and no row was refused")


if __name__ == "__main__":
    main()
