"""Helpers the tests share: a free port on 127.0.0.1 and Debian's chromium under Playwright; and no request cache unless
a test asks for one (a reply cached by an earlier run would hide the calls a test counts)."""
import contextlib, os, shutil, socket
from pathlib import Path

os.environ["WHILELAB_CACHE"] = "off"   # set on import, before any fixture of any scope plays a rollout

# Property tests: CI runs a fixed sample (derandomized), so a green run never depends on what a random search found that
# day. Before a stop, explore widely: `WHILELAB_EXAMPLES=2000 python -m pytest tests -k "props or schemas or bad_input"`
# (the `explore` profile: random, more examples); every case it finds becomes an explicit example test.
from hypothesis import settings as _hypothesis
_hypothesis.register_profile("ci", derandomize=True, print_blob=True)
_hypothesis.register_profile("explore", derandomize=False, print_blob=True)
_hypothesis.load_profile("explore" if "WHILELAB_EXAMPLES" in os.environ else "ci")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HAVE_CHROMIUM = Path(CHROMIUM).exists()
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]

def free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@contextlib.contextmanager
def chromium_page(width: int = 1300, height: int = 1000):
    "A page in headless Debian chromium driven by Playwright; the browser is closed on exit."
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try: yield b.new_page(viewport={"width": width, "height": height})
        finally: b.close()
