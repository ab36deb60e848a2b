"""The plan as an OpenEnv environment, served by OpenEnv's own app on 127.0.0.1 and played through OpenEnv's client:
two sessions at once, one driven by a tiny randomly initialised language model on CPU for two steps of rollout, the
other replaying the offline agent's turns to the end, where its reward is whilelab's grade of the same rollout. The
documented client, OpenEnv's HTTP routes and a refused session are checked on the pinned release in process and on the
latest in a venv of its own (tests/openenv_play.py)."""
import os, subprocess, threading, time, venv, warnings
from pathlib import Path
import pytest

pytest.importorskip("openenv", reason="OpenEnv is not installed (pip install 'whilelab[openenv]')")
torch = pytest.importorskip("torch")
import uvicorn
from conftest import free_port
from whilelab.defaults import SimOptions
from whilelab.simulate import simulate
from whilelab.rl import server, SituationClient, SituationEnvironment, ToolAction
from openenv_play import check_all

HERE = Path(__file__).parent
# The latest OpenEnv release, which `whilelab[openenv]` (openenv-core>=0.2.0) installs today; the pin is in
# constraints-dev.txt. Set WHILELAB_OPENENV_LATEST to a python that has it to skip making the venv (40 s here).
OPENENV_LATEST = "openenv-core==0.3.0"

OPTS = SimOptions(k_samples=1, n_phrasings=1, search=None)


@pytest.fixture(scope="module")
def sim():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(options=OPTS, progress=False)


@pytest.fixture(scope="module")
def url(sim):
    "OpenEnv's app for the plan, two sessions at once, served by uvicorn on 127.0.0.1; stopped after the tests."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = server(sim.spec, OPTS, max_sessions=2)
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    t0 = time.time()
    while not srv.started:
        assert t.is_alive() and time.time() - t0 < 30, "the OpenEnv server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    t.join(10)


def tiny_model(texts):
    "A 2-layer Llama with random weights and a byte-level BPE tokenizer trained on `texts` (nothing downloaded)."
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=400, special_tokens=special,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|endoftext|>", eos_token="<|im_end|>",
                                   additional_special_tokens=special[1:])
    fast.chat_template = qwen2_5_chat_template
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                      pad_token_id=fast.pad_token_id, eos_token_id=fast.eos_token_id)
    return fast, LlamaForCausalLM(cfg).eval()


def model_turns(url, tok, model, situation_id, out, ready):
    """Two steps of rollout where the tiny model writes the agent's turns; an episode the person ends (random text
    rarely keeps them) is graded, and the next starts on the following plan situation (seed)."""
    with SituationClient(base_url=url) as env:
        first = obs = env.reset(situation_id=situation_id).observation
        ready.wait(30)                                           # both sessions are open at once
        chat = [{"role": "system", "content": obs.policy}, {"role": "user", "content": obs.content}]
        seen, episodes = [], 0
        while len(seen) < 2:
            ids = tok.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt", return_dict=True)
            with torch.no_grad():
                gen = model.generate(**ids, max_new_tokens=12, do_sample=False, pad_token_id=tok.pad_token_id)
            said = tok.decode(gen[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
            step = env.step(ToolAction(message=said))
            seen.append((said, step.observation.role, step.done, step.reward, env.state()))
            chat += [{"role": "assistant", "content": said}, {"role": "user", "content": step.observation.content}]
            if step.done:
                episodes += 1
                obs = env.reset(seed=episodes).observation
                chat = [{"role": "system", "content": obs.policy}, {"role": "user", "content": obs.content}]
        out["model"] = (first, seen)


def replayed(url, row, out, ready):
    "The offline agent's turns of `row`, played through a second session to the end of the episode."
    with SituationClient(base_url=url) as env:
        first = env.reset(situation_id=row["situation_id"], phrasing=row["phrasing"], sample=row["sample"])
        ready.wait(30)
        last = None
        for m in (m for m in row["messages"] if m["role"] == "assistant"):
            for c in m.get("tool_calls") or []:
                last = env.step(ToolAction(tool=c["function"]["name"], arguments=c["function"]["arguments"],
                                           call_id=c["id"], message=m["content"]))
            if not m.get("tool_calls"): last = env.step(ToolAction(message=m["content"]))
        out["replay"] = (first.observation, last, env.state())


def test_two_sessions_at_once_a_tiny_model_and_a_replay_graded_by_whilelab(sim, url):
    texts = [m["content"] for r in sim.rows[:60] for m in r["messages"] if m["content"]]
    tok, model = tiny_model(texts)
    row = next(r for r in sim.rows if r["reward"] == 0.0 and r["calls"])          # a rollout that broke a rule
    other = next(r for r in sim.rows if r["situation_id"] != row["situation_id"])
    out, ready = {}, threading.Barrier(2)
    threads = [threading.Thread(target=model_turns, args=(url, tok, model, other["situation_id"], out, ready)),
               threading.Thread(target=replayed, args=(url, row, out, ready))]
    for t in threads: t.start()
    for t in threads: t.join(120)
    assert set(out) == {"model", "replay"}, out
    # the model's session: the person opened; each of the model's two turns was answered by the person, and an
    # episode that ended came back graded by whilelab, its state holding the situation played
    opening, seen = out["model"]
    assert opening.situation_id == other["situation_id"] and opening.tools and opening.content
    assert len(seen) == 2 and all(role == "user" for _, role, _, _, _ in seen), seen
    for said, _, done, reward, state in seen:
        assert state.calls == [] and state.step_count >= 1 and state.situation_id
        assert (reward in (0.0, 1.0)) if done else reward is None
        assert state.reward == reward
    # the replay's session: the same conversation to its end, graded as whilelab graded the rollout
    opening, last, state = out["replay"]
    assert opening.content == row["messages"][0]["content"]
    assert last.done and last.reward == row["reward"] == 0.0
    assert last.observation.failed == [v["rule"] for v in row["rules"] if not v["passed"]]
    assert state.calls == row["calls"] and state.reward == row["reward"]


def test_a_step_before_reset_and_an_unknown_situation_say_the_fix(sim):
    env = SituationEnvironment(sim.spec, OPTS, situations={s.id: s for s in sim.situations})
    with pytest.raises(RuntimeError, match="call reset"): env.step(ToolAction(message="hi"))
    with pytest.raises(ValueError, match="not in this environment's plan"): env.reset(situation_id="s-nope")


def test_the_pinned_release_plays_with_the_client_over_http_and_refuses_a_session_saying_why(sim):
    assert check_all(sim) == ["client", "http", "refused"]


@pytest.fixture(scope="module")
def latest_python(tmp_path_factory):
    "A python with OpenEnv's latest release: a venv over this one's packages, made here with pip (skipped if it can't)."
    if os.environ.get("WHILELAB_OPENENV_LATEST"): return os.environ["WHILELAB_OPENENV_LATEST"]
    d = tmp_path_factory.mktemp("openenv-latest")
    venv.create(d, system_site_packages=True, with_pip=True)
    py = str(d / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", OPENENV_LATEST],
                       capture_output=True, text=True)
    if r.returncode: pytest.skip(f"pip could not install {OPENENV_LATEST} into a venv (no index reachable?): "
                                 f"{r.stderr.strip()[-300:]}")
    return py


def test_the_latest_release_plays_the_same_with_its_async_client_and_the_documented_with(latest_python):
    env = {**os.environ, "WHILELAB_CACHE": "off",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([latest_python, str(HERE / "openenv_play.py")], capture_output=True, text=True, env=env,
                       cwd=HERE.parent, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    version = OPENENV_LATEST.split("==")[1]
    assert f"openenv-core {version} ok: client, http, refused, async client" in r.stdout, (r.stdout, r.stderr[-2000:])
