"""Drives a rollout service with the gold policy for a fixed time (bench/rollout.sh).

    python3 bench/rollout_bench.py --url URL --token-file F --seconds S --workers N [--task ID]...

N threads each loop: create a rollout of the next task (waiting as a 503's
Retry-After says), play its gold solution, one action a step, until done.
Prints one JSON object: rollouts finished, their rate per hour, and the
median and 90th percentile of the create and step latencies (as the client
sees them, the environment's work included), in milliseconds.
"""

import argparse
import itertools
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "rollout"))
from proctor_rollout import RolloutClient, RolloutError  # noqa: E402


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1000, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--task", action="append")
    args = ap.parse_args()
    token = open(args.token_file).read().strip()
    tasks = {t["id"]: t for t in RolloutClient(args.url, token).tasks(gold=True)}
    order = itertools.cycle(args.task or sorted(tasks))
    lock = threading.Lock()
    steps, creates, outcomes, faults = [], [], {}, []
    end = time.monotonic() + args.seconds

    def worker(i):
        c = RolloutClient(args.url, token, client="bench-%d" % i)
        while time.monotonic() < end:
            with lock:
                tid = next(order)
            t0 = time.monotonic()
            try:
                ro = c.create(tid, observation="screenshot")
            except RolloutError as e:
                if e.kind in ("exhausted", "client_limit"):
                    time.sleep(max(e.retry_after, 0.05))
                    continue
                raise
            t1 = time.monotonic()
            done, final, k = ro["status"] != "running", ro.get("final"), 0
            gold = [[a] for a in tasks[tid].get("gold", [])]
            my = []
            while not done:
                acts = gold[k] if k < len(gold) else [{"kind": "done"}]
                s0 = time.monotonic()
                sr = c.step(ro["id"], actions=acts)
                my.append(time.monotonic() - s0)
                done, final, k = sr["done"], sr.get("final"), k + 1
            with lock:
                creates.append(t1 - t0)
                steps.extend(my)
                if final["status"] == "error":
                    faults.append(final["reason"])
                else:
                    outcomes[final["outcome"]] = outcomes.get(final["outcome"], 0) + 1

    start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    n = sum(outcomes.values()) + len(faults)
    print(json.dumps({
        "rollouts": n, "seconds": round(elapsed, 1), "per_hour": round(n * 3600 / elapsed),
        "outcomes": outcomes, "faults": len(faults),
        "create_ms_median": pct(creates, 0.5), "create_ms_p90": pct(creates, 0.9),
        "step_ms_median": pct(steps, 0.5), "step_ms_p90": pct(steps, 0.9), "steps": len(steps),
    }))


if __name__ == "__main__":
    main()
