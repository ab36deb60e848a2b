"""The corpus of unseen worlds (`bench/corpus.py`) against its checked-in baseline: a change that lowers delivered
coverage, the world axis as played, the person's own records or the ok-rate on any of them, or raises the price of full
delivery, fails here, whatever the example's rows say. CI runs the corpus's quick settings (k=2, seed 0)."""
import json, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import corpus

def test_the_corpus_holds_its_baseline():
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "corpus.py"), "--quick", "--check", "--workers", "2"],
                       capture_output=True, text=True, timeout=2400)
    print(p.stdout[-6000:], p.stderr[-2000:])
    assert p.returncode == 0, p.stdout[-3000:]

def test_the_check_can_fail():
    base = json.loads((ROOT / "bench" / "corpus_baseline_quick.json").read_text())
    name, was = next(iter(sorted(base.items())))
    worse = {**was, "delivered": was["delivered"] - 0.05, "exists": (was["exists"] or 1) - 0.1}
    said = corpus.compare([worse], base)
    assert any("delivered" in s for s in said) and any("exists" in s for s in said), said
    assert corpus.compare([was], base) == []
    assert "not in the baseline" in corpus.compare([{**was, "world": "nowhere"}], base)[0]
