"""Ctrl-C on `whilelab run`: SIGINT at seeded random moments, and whether it is honoured.

Each try starts `whilelab run` on the built-in example shop (offline), waits a random time (seeded) after the first
row reaches disk (or from the start, for a third of the tries), sends SIGINT, and times the exit. A try is honoured
when the run exits with 130 within `--limit` seconds and says 'stopped'; or when the signal came after the run had
written its last file (summary.json) and printed its end, in the interpreter's teardown, and the run exits 0 within the
limit with nothing lost (counted apart: "finished, exiting"). With `--resume`, the run is then played to
its end and its rows checked for duplicates.

    python bench/ctrl_c.py [--tries 50] [--seed 0] [--limit 1.0] [--resume]
"""
import argparse, json, os, random, signal, subprocess, sys, tempfile, time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CMD = [sys.executable, "-m", "whilelab.command", "run", "--world", "whilelab.worlds:example_shop",
       "--policy", "policy.md", "--out", "r"]
POLICY = "Only cancel pending orders. Ask before cancelling anything."

def lines(p: Path) -> int: return p.read_bytes().count(b"\n") if p.is_file() else 0

def one(rng, limit: float, resume: bool) -> dict:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d); (d / "policy.md").write_text(POLICY)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        p = subprocess.Popen(CMD, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rows, t = d / "r" / "rows.jsonl", time.monotonic()
        from_start = rng.random() < 1 / 3
        if not from_start:
            while not lines(rows) and p.poll() is None and time.monotonic() - t < 300: time.sleep(0.005)
        time.sleep(rng.uniform(0, 4.0 if from_start else 8.0))
        if p.poll() is not None:
            p.communicate(); return {"finished_first": True}
        p.send_signal(signal.SIGINT); sent = time.monotonic()
        try: _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired: p.kill(); _, err = p.communicate()
        took, said = time.monotonic() - sent, None
        for part in err.split("The ")[1:]:
            if " rollouts played so far are kept" in part: said = int(part.split()[0])
            if " rollouts and summary are in" in part: said = int(part.split("its ")[1].split()[0])   # finished
        exiting = p.returncode == 0 and (d / "r" / "summary.json").is_file() and "Traceback" not in err
        if exiting: said = json.loads((d / "r" / "summary.json").read_text())["rollouts"]    # what the run said it kept
        out = {"code": p.returncode, "seconds": took, "stopped": "whilelab: stopped." in err, "exiting": exiting,
               "traceback": "Traceback" in err, "kept": said if said is not None else 0, "disk": lines(rows),
               "tail": err[-600:] if "Traceback" in err or p.returncode != 130 else "",
               "honoured": took <= limit and (p.returncode == 130 and "whilelab: stopped." in err or exiting)}
        if resume and p.returncode == 130:
            r = subprocess.run(CMD, cwd=d, env=env, capture_output=True, text=True)
            keys = [(x["situation_id"], x["phrasing"], x["sample"]) for x in map(json.loads, rows.open())]
            out["resume_code"], out["duplicates"] = r.returncode, len(keys) - len(set(keys))
        return out

def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--tries", type=int, default=50); a.add_argument("--seed", type=int, default=0)
    a.add_argument("--limit", type=float, default=1.0, help="seconds a SIGINT may take to end the run")
    a.add_argument("--resume", action="store_true", help="play each stopped run to its end and count duplicates")
    a = a.parse_args()
    # as a terminal starts a command: a shell's background job (`... &` in a script) ignores SIGINT and every process
    # it starts inherits that, so a signal before `whilelab` sets its own handler would be lost silently (exit 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng, res = random.Random(a.seed), []
    for i in range(a.tries):
        r = one(rng, a.limit, a.resume); res.append(r)
        print(f"try {i}: {r}", file=sys.stderr, flush=True)
    sig = [r for r in res if not r.get("finished_first")]
    secs = sorted(r["seconds"] for r in sig)
    print(f"\n| tries | signalled | honoured within {a.limit:g} s | of them finished, exiting | exit codes "
          "| median / max s to exit | rows kept == rows on disk | tracebacks | resumed: duplicates |")
    print("|---|---|---|---|---|---|---|---|---|")
    codes = ", ".join(f"{c}: {n}" for c, n in sorted(Counter(r["code"] for r in sig).items()))
    same = sum(r["kept"] == r["disk"] for r in sig)
    dup = (f"{sum(r.get('duplicates', 0) for r in sig)} in {sum('duplicates' in r for r in sig)} resumed"
           if a.resume else "not run")
    med = f"{secs[len(secs) // 2]:.2f} / {secs[-1]:.2f}" if secs else "-"
    print(f"| {a.tries} | {len(sig)} | {sum(r['honoured'] for r in sig)} | {sum(r['exiting'] for r in sig)} | {codes} | {med} | {same} of {len(sig)} "
          f"| {sum(r['traceback'] for r in sig)} | {dup} |")

if __name__ == "__main__": main()
