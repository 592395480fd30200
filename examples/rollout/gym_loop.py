"""Plays tasks' gold solutions through a rollout service, as a training loop would play a policy.

    python3 examples/rollout/gym_loop.py --url https://127.0.0.1:7500#sha256=... --token-file token [--task ID]...

Prints a JSON line per rollout: the task, its final reward and outcome (or
the fault that gave it none). Standard library only.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proctor_rollout import ProctorEnv, RolloutClient, RolloutError, RolloutFault  # noqa: E402


def gold_policy(gold):
    """The task's gold solution, one action a step, then DONE."""
    steps = [[a] for a in gold]

    def policy(observation, step):
        return steps[step] if step < len(steps) else [{"kind": "done"}]

    return policy


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True, help="the service's address, as proctor serve prints it")
    p.add_argument("--token-file", required=True)
    p.add_argument("--task", action="append", help="a task to play (repeatable); default: every task served")
    p.add_argument("--observation", default="tree", choices=["screenshot", "tree", "both", "som"])
    p.add_argument("--image", default="png", choices=["png", "jpeg"])
    args = p.parse_args()
    with open(args.token_file) as f:
        token = f.read().strip()
    client = RolloutClient(args.url, token, client="gym-loop")
    tasks = {t["id"]: t for t in client.tasks(gold=True)}
    status = 0
    for task_id in args.task or list(tasks):
        env = ProctorEnv(client, task_id, observation=args.observation, image=args.image)
        policy = gold_policy(tasks[task_id].get("gold", []))
        line = {"task": task_id}
        try:
            obs, info = env.reset()
            total, step = 0.0, 0
            while True:
                obs, reward, terminated, truncated, info = env.step(policy(obs, step))
                total, step = total + reward, step + 1
                if terminated or truncated:
                    break
            final = info["final"]
            line.update(reward=final["reward"], outcome=final["outcome"], steps=final["steps"], **{"return": total})
        except RolloutFault as e:
            line.update(reward=None, outcome="error", fault=str(e))
        except RolloutError as e:
            line.update(reward=None, outcome="error", fault=str(e))
            status = 1
        finally:
            env.close()
        print(json.dumps(line), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
