"""Delivered coverage at the plan's price: how many rollouts, in the order they land, until every deliverable pair
of the plan is delivered, as a multiple of the plan's own price (cells x k).

For seeds 0-9 on the built-in example and the two tau-bench domains in ../shared/data (retail, airline), k=4, n=1,
the search on with its default options. A pair counts only when a row shows it happened (`delivered_cell`: the
tool was called, the planned fault fired); rows are read from the run's store in landing order. "Deliverable" pairs
are the plan's pairs that some row delivered by the end of the run (the ones the search gave up on are listed as
undelivered, with reasons, and not owed). The peer is the plan played once: exactly cells x k rollouts (ratio 1.0)
when every cell delivers what it plans, which no exploring search can beat on this count.

Targets (issue 16): at most 1.25 on every seed, median at most 1.10.

    python bench/coverage.py [--seeds 10] [--workers 2] [--markdown]
"""

import argparse, itertools, json, statistics, sys, tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from whilelab.core import shared_data


def one(job):
    name, seed = job
    from whilelab.defaults import SimOptions
    from whilelab.rollout import delivered_cell
    from whilelab.simulate import simulate
    from whilelab.cover import missing_pairs
    from whilelab.search import pairs_of

    kw = {}
    if name != "shopfront":
        d = json.loads(shared_data("tau_bench_domains.json", __file__).read_text())[name]
        kw = dict(tools=d["tools"], policy=d["policy"])
    with tempfile.TemporaryDirectory() as out:
        sim = simulate(options=SimOptions(k_samples=4, n_phrasings=1, seed=seed), out=out, progress=False, **kw)
        landed = [json.loads(line) for line in (Path(out) / "rows.jsonl").read_text().splitlines() if line.strip()]
    cov = sim.coverage
    owed = set().union(*(pairs_of(cov, delivered_cell(r)) for r in landed))  # delivered by the end: deliverable
    planned = owed | set(missing_pairs(cov))

    seen, at = set(), None
    for i, r in enumerate(landed, 1):
        seen |= pairs_of(cov, delivered_cell(r))
        if owed <= seen:
            at = i
            break
    cells = int(sim.plan.sizes["cell"])
    return {
        "set": name,
        "seed": seed,
        "cells": cells,
        "price": cells * 4,
        "full at": at,
        "ratio": at / (cells * 4),
        "deliverable": f"{len(owed)}/{len(planned)}",
        "stopped at": len(landed),
        "why": sim.stopped,
        "signatures at full": len({r["signature"] for r in landed[:at]}),   # what exploring found by then
        "signatures at stop": len({r["signature"] for r in landed}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    if shared_data("tau_bench_domains.json", __file__) is None:
        sys.exit("bench/coverage.py needs ../shared/data/tau_bench_domains.json beside the project")
    jobs = list(itertools.product(("shopfront", "retail", "airline"), range(a.seeds)))
    with ProcessPoolExecutor(a.workers) as ex:
        rows = list(ex.map(one, jobs))
    head = list(rows[0])
    fmt = lambda v: f"{v:.2f}" if isinstance(v, float) else str(v)
    if a.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(fmt(r[h]) for h in head) + " |")
    else:
        for r in [dict(zip(head, head))] + rows:
            print("  ".join(fmt(r[h]).ljust(12) for h in head))
    ratios = [r["ratio"] for r in rows]
    print(
        f"\nper set, median (max): "
        + "; ".join(
            f"{s} {statistics.median(x['ratio'] for x in rows if x['set'] == s):.2f} "
            f"({max(x['ratio'] for x in rows if x['set'] == s):.2f})"
            for s in ("shopfront", "retail", "airline")
        )
    )
    print("signatures at stop, median per set: " + "; ".join(
        f"{s} {statistics.median(x['signatures at stop'] for x in rows if x['set'] == s):g}"
        for s in ("shopfront", "retail", "airline")))
    print(
        f"all: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
        f"targets: every seed <= 1.25 {'met' if max(ratios) <= 1.25 else 'MISSED'}, "
        f"median <= 1.10 {'met' if statistics.median(ratios) <= 1.10 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
