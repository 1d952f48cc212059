"""Rows for verl's agent loop from `calibrl export --kind prompts`.

verl picks a row's agent loop by its agent_name column (AgentLoopWorker;
rows without one get rollout.agent.default_agent_loop), so every calibrl
row names the loop config/agent.yaml registers: calibrl_user. The rest of
the row is export's: prompt (the agent's first view), data_source,
reward_model, and extra_info.interaction_kwargs, which open the same
episode on `calibrl serve` (verl hands them to the loop as the
interaction_kwargs column). verl reads .jsonl as well as .parquet, so the
output is JSON lines and this needs no packages:

    calibrl export --logs eps.jsonl --kind prompts --out prompts.jsonl
    python3 create_dataset.py --in prompts.jsonl --out train.jsonl
"""

import argparse
import json
import os
import sys
import tempfile

AGENT_NAME = "calibrl_user"  # calibrl_verl_agent_loop.AGENT_NAME, config/agent.yaml's name


def agent_rows(lines, path, agent_name=AGENT_NAME):
    """The rows of an export, each with agent_name; bad input is refused
    with its file, line and field."""
    out = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ValueError(f"{path}:{no}: not JSON: {e}") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{no}: want a JSON object, got {type(row).__name__}")
        kw = (row.get("extra_info") or {}).get("interaction_kwargs")
        if not isinstance(kw, dict) or not kw.get("task"):
            raise ValueError(f"{path}:{no}: extra_info.interaction_kwargs.task missing: is this a row of `calibrl export --kind prompts`?")
        if not isinstance(row.get("prompt"), list) or not row["prompt"]:
            raise ValueError(f"{path}:{no}: prompt: want a non-empty list of messages")
        row["agent_name"] = agent_name
        out.append(row)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--in", dest="src", required=True, help="rows of `calibrl export --kind prompts` (JSON lines)")
    ap.add_argument("--out", required=True, help="the .jsonl verl trains on (data.train_files / data.val_files)")
    ap.add_argument("--agent-name", default=AGENT_NAME)
    args = ap.parse_args()
    with open(args.src) as f:
        rows = agent_rows(f, args.src, args.agent_name)
    # Atomic: a failed run leaves no partial file.
    d = os.path.dirname(os.path.abspath(args.out))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".create_dataset-")
    try:
        with os.fdopen(fd, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
        os.replace(tmp, args.out)
    except BaseException:
        os.unlink(tmp)
        raise
    print(f"{len(rows)} rows -> {args.out} (agent_name {args.agent_name})", file=sys.stderr)


if __name__ == "__main__":
    main()
