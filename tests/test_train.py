"""The step-07 exports train with TRL's own trainers, as a researcher would run them: exported to Parquet, loaded
with `datasets`, then two optimizer steps each of SFT, DPO, reward modelling and KTO on CPU, with a tiny randomly
initialised Llama and a tokenizer trained on the exports themselves (nothing is downloaded). The SFT loss must fall
only on the agent's own tokens. Skipped where torch is not installed; `pip install torch==2.13.0 accelerate` then
`python -m pytest tests/test_train.py` runs it alone."""
import json, logging
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")
import datasets
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification, PreTrainedTokenizerFast
from whilelab.simulate import simulate
from whilelab.defaults import SimOptions
from whilelab.cut import cut_sft, cut_dpo, cut_grpo, cut_rm, cut_kto, export, environment_for

# Qwen2.5's chat template, as TRL ships it: TRL knows it, so it swaps in its training variant (generation markers) for SFT's
# assistant mask and parses tool calls out of GRPO completions with it.
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    "Parquet exports of the example's graded plan (k=4), loaded back with `datasets`."
    d = tmp_path_factory.mktemp("exports")
    sim = simulate(options=SimOptions(k_samples=4, search=None), progress=False)
    sets = {s.kind: s for s in (f(sim.rows, sim.spec) for f in (cut_sft, cut_dpo, cut_grpo, cut_rm, cut_kto))}
    datasets.disable_progress_bars()
    out = {k: datasets.load_dataset("parquet", data_files=str(export(s, d)["parquet"]), split="train") for k, s in sets.items()}
    return {**out, "spec": sim.spec}


@pytest.fixture(scope="module")
def tokenizer(exports):
    "A byte-level BPE tokenizer trained on the exports rendered with the chat template (lossless, so tool calls parse)."
    from trl.chat_template_utils import qwen2_5_chat_template
    from tokenizers import decoders
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    scratch = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.BPE()))
    scratch.chat_template = qwen2_5_chat_template
    def texts():
        for row in exports["sft"]:
            yield scratch.apply_chat_template(row["messages"], tools=row["tools"], tokenize=False)
    tok.train_from_iterator(texts(), trainers.BpeTrainer(vocab_size=2000, special_tokens=SPECIAL,
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<|endoftext|>", eos_token="<|im_end|>",
                                   additional_special_tokens=SPECIAL[1:])
    fast.chat_template = qwen2_5_chat_template
    return fast


def tiny(tokenizer, cls=LlamaForCausalLM, **kw):
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, **kw)
    return cls(cfg)


def args(cls, tmp_path, **kw):
    return cls(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2, learning_rate=1e-3, logging_steps=1,
               report_to=[], save_strategy="no", use_cpu=True, seed=0, **kw)


def trained(trainer):
    out = trainer.train()
    assert out.global_step == 2 and all(torch.isfinite(torch.tensor(h["loss"])) for h in trainer.state.log_history if "loss" in h)
    return trainer


def test_sft_trains_and_its_loss_falls_only_on_agent_tokens(exports, tokenizer, tmp_path):
    from trl import SFTConfig, SFTTrainer
    ds = exports["sft"].select(range(8))
    tr = trained(SFTTrainer(tiny(tokenizer), args=args(SFTConfig, tmp_path, assistant_only_loss=True, max_length=4096),
                            train_dataset=ds, processing_class=tokenizer))
    for ex, row in zip(tr.train_dataset, ds):
        ids, mask = ex["input_ids"], [lab != -100 for lab in ex["labels"]]      # what the loss is computed on
        scored = tokenizer.decode([i for i, m in zip(ids, mask) if m])
        agent = [m for m, keep in zip(row["messages"], row["loss_mask"]) if keep]
        others = [m["content"] for m, keep in zip(row["messages"], row["loss_mask"]) if not keep and m["content"]]
        assert sum(mask) and scored.count("<|im_end|>") == len(agent)        # every agent turn, end of turn included
        assert all(m["content"] in scored for m in agent if m["content"])
        assert not any(o in scored for o in others if len(o) > 12)           # no person turn, tool result or policy
        assert "<|im_start|>" not in scored


def test_dpo_trains_on_the_first_diverging_agent_turn(exports, tokenizer, tmp_path):
    from trl import DPOConfig, DPOTrainer
    ds = exports["dpo"].select(range(4))
    assert all([m["role"] for m in r["chosen"]] == ["assistant"] for r in ds)       # the agent's words only
    trained(DPOTrainer(tiny(tokenizer), ref_model=tiny(tokenizer), args=args(DPOConfig, tmp_path, max_length=4096), train_dataset=ds,
                       processing_class=tokenizer))                    # the reference: the same random start


def test_reward_model_trains_on_pairs_at_chance_loss(exports, tokenizer, tmp_path):
    from trl import RewardConfig, RewardTrainer
    ds = exports["rm"].select(range(4))
    assert "margin" not in ds.column_names                     # TRL would read it as a required logit gap
    model = tiny(tokenizer, LlamaForSequenceClassification, num_labels=1)
    tr = trained(RewardTrainer(model, args=args(RewardConfig, tmp_path, max_length=4096), train_dataset=ds, processing_class=tokenizer))
    first = next(h["loss"] for h in tr.state.log_history if "loss" in h)
    assert abs(first - 0.693) < 0.05, first                    # an untrained scorer starts at log 2, with no margin term


def test_kto_trains_on_the_unpaired_labels(exports, tokenizer, tmp_path):
    from trl import KTOConfig, KTOTrainer
    ds = exports["kto"]
    ds = ds.select([i for i, lab in enumerate(ds["label"]) if lab][:4] + [i for i, lab in enumerate(ds["label"]) if not lab][:4])
    logging.getLogger("trl").setLevel(logging.ERROR)
    trained(KTOTrainer(tiny(tokenizer), ref_model=tiny(tokenizer), args=args(KTOConfig, tmp_path, max_length=4096), train_dataset=ds,
                       processing_class=tokenizer))


def test_grpo_trains_through_the_shipped_environment_and_executes_a_tool_call(exports, tokenizer, tmp_path):
    """GRPO with `environment_for(spec)` as TRL's environment_factory: TRL shows the policy the environment's tools, parses
    the tool call out of a sampled completion, the situation's world answers it, and the environment grades the rollout.
    A random tiny model cannot write a tool call, so generation is steered onto one (a sequence bias on the tokens of
    get_order with the id the person gave): the trainer, the parsing, the environment and the reward are all real."""
    import re
    from trl import GRPOConfig, GRPOTrainer
    grpo = exports["grpo"]
    at = next(i for i, r in enumerate(grpo) if r["cell"]["tool"] == "get_order" and r["cell"]["condition"] == "ok")
    row = grpo[at]
    told = re.search(r"#W\d+", row["prompt"][-1]["content"]).group()
    calls = []
    class Recorded(environment_for(exports["spec"]).cls):   # the shipped environment, noting what reached its world
        def _call(self, name, arguments):
            calls.append((name, dict(arguments))); return super()._call(name, arguments)
    tools = [getattr(Recorded(), t.api_name) for t in exports["spec"].tools]
    prompt = tokenizer.apply_chat_template(row["prompt"], tools=tools, add_generation_prompt=True, tokenize=False)
    wanted = '<tool_call>\n{"name": "get_order", "arguments": {"order_id": "%s"}}\n</tool_call><|im_end|>' % told
    p_ids, ids = tokenizer(prompt)["input_ids"], tokenizer(prompt + wanted)["input_ids"]
    assert ids[: len(p_ids)] == p_ids
    steer = [[ids[i - 3: i + 1], 50.0] for i in range(len(p_ids), len(ids))]   # each next token, given the three before it
    cfg = GRPOConfig(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2, num_generations=2,
                     max_completion_length=96, learning_rate=1e-4, report_to=[], save_strategy="no", use_cpu=True, seed=0,
                     logging_steps=1, generation_kwargs={"sequence_bias": steer})
    tr = GRPOTrainer(tiny(tokenizer), args=cfg, train_dataset=grpo.select([at] * 4), processing_class=tokenizer,
                     environment_factory=Recorded)
    assert tr.train().global_step == 2
    assert ("get_order", {"order_id": told}) in calls, calls[:5]         # a sampled tool call reached the situation's world
    rewards = [h[k] for h in tr.state.log_history for k in h if k.startswith("rewards/") and k.endswith("/mean")]
    assert rewards and max(rewards) == 1.0, tr.state.log_history        # the grounded lookup earns the environment's reward


def test_grpo_hands_the_completions_words_to_the_environment(exports, tokenizer, tmp_path):
    """`tell_replies` among TRL's reward functions: TRL gives it each rollout's completion and environment, and the
    environment's reward then reads the agent's words (here a random model's, so a read's facts are not told: 0)."""
    from trl import GRPOConfig, GRPOTrainer
    from whilelab.cut import tell_replies
    grpo = exports["grpo"]
    at = next(i for i, r in enumerate(grpo) if r["cell"]["tool"] == "get_order" and r["cell"]["condition"] == "ok")
    heard = []
    class Heard(environment_for(exports["spec"]).cls):     # the shipped environment, noting what it was told
        def get_reward(self):
            out = super().get_reward(); heard.append((self.replies, out, dict(self.reward_parts))); return out
    cfg = GRPOConfig(output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                     max_completion_length=16, learning_rate=1e-4, report_to=[], save_strategy="no", use_cpu=True,
                     seed=0, logging_steps=1)
    tr = GRPOTrainer(tiny(tokenizer), args=cfg, train_dataset=grpo.select([at] * 2), processing_class=tokenizer,
                     reward_funcs=[tell_replies], environment_factory=Heard)
    assert tr.train().global_step == 1
    assert heard and all(isinstance(said, str) for said, _, _ in heard), heard      # every rollout's words arrived
    # no call of get_order (a random model does not write one): the goal is unmet whatever it said
    assert all(r == 0.0 and parts["goal"] == 0.0 for _, r, parts in heard), heard


def test_factories_pickle_into_a_fresh_process_that_plays_them(exports, tmp_path):
    """AsyncGRPOTrainer pickles its environment factories into a worker process: there, each builds its agent's
    environment, replays a GRPO row's situation and grades it, with no class from the parent."""
    import pickle, subprocess, sys
    from whilelab.cut import environment_factories
    from whilelab.core import AgentSpec
    spec = exports["spec"]
    lookups = AgentSpec("lookups", [t for t in spec.tools if t.name in ("find_customer", "get_order")], spec.policy)
    row = next(r for r in exports["grpo"] if r["cell"]["tool"] == "get_order" and r["cell"]["condition"] == "ok")
    row = {k: row[k] for k in ("situation_id", "cell", "seed", "arm")}
    blob = pickle.dumps((environment_factories(spec, lookups), row))
    child = ("import inspect, pickle, sys\n"
             "fs, row = pickle.loads(sys.stdin.buffer.read())\n"
             "out = {}\n"
             "for name, f in fs.items():\n"
             "    env = f(); env.reset(**row); env.get_order(order_id='#W0000')\n"
             "    methods = [n for n, _ in inspect.getmembers(type(env), inspect.isfunction) if not n.startswith('_')]\n"
             "    out[name] = (type(env).__name__, methods, env.get_reward())\n"
             "print(repr(out))")
    r = subprocess.run([sys.executable, "-c", child], input=blob, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    out = eval(r.stdout.decode())
    # what TRL lists as the environment's tools, besides reset and get_reward; an invented id scores 0
    assert out["lookups"] == ("LookupsEnv", ["find_customer", "get_order", "get_reward", "reset"], 0.0)
    assert out["shopfront"][0] == "ShopfrontEnv" and len(out["shopfront"][1]) == len(spec.tools) + 2


# An agent whose tools are functions of `__main__`, as a notebook defines them. The factory is pickled into a process
# that multiprocessing's spawn makes, which runs none of the `if __name__ == "__main__":` block, so it has no
# `get_weather`: the factory must carry the tools' schemas alone, not the functions (which the environment never calls).
MAIN_TOOLS = """
import multiprocessing as mp, pickle, sys

def play(blob, row):
    "In the spawned process: the factory unpickled, a fresh environment, the row's situation, one call, the reward."
    assert not hasattr(sys.modules["__main__"], "get_weather")          # as in a worker of a notebook's trainer
    env = pickle.loads(blob)()
    env.reset(**row)
    said = env.get_weather(city="Oslo")
    methods = sorted(n for n, v in vars(type(env)).items() if not n.startswith("_") and callable(v))
    return type(env).__name__, methods, isinstance(said, str), env.get_reward()

if __name__ == "__main__":
    from whilelab.core import AgentSpec
    from whilelab.cut import environment_for

    def get_weather(city: str) -> str:
        \"\"\"Today's weather in a city.

        Args:
            city: the city's name\"\"\"
        return f"sunny in {city}"

    spec = AgentSpec("weather", [get_weather], "Answer questions about the weather. Look it up first.")
    assert spec.tools[0].fn is get_weather and get_weather.__module__ == "__main__"
    factory = environment_for(spec)
    row = {"situation_id": "s-weather", "cell": {"tool": "get_weather", "condition": "ok"}, "seed": 0}
    with mp.get_context("spawn").Pool(1) as pool:
        print(repr(pool.apply(play, (pickle.dumps(factory), row))))
    env = pickle.loads(pickle.dumps(factory))()
    env.reset(**row)
    print(repr(env.get_weather(city="Oslo") != "sunny in Oslo"))     # the world answers from schemas, not the function
"""


def test_a_factory_of_tools_defined_in_main_unpickles_and_plays_in_a_spawned_process(tmp_path):
    import os, subprocess, sys
    script = tmp_path / "weather.py"
    script.write_text(MAIN_TOOLS)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "WHILELAB_CACHE": "off"})
    assert r.returncode == 0, r.stderr[-3000:]
    played, schemas_answered = r.stdout.strip().splitlines()
    # the tool a method of the agent's environment class, answered by its world; a plain successful call scores 1
    assert eval(played) == ("WeatherEnv", ["get_weather"], True, 1.0), r.stdout
    assert schemas_answered == "True"


def test_grpo_routes_each_row_to_its_agents_environment(exports, tokenizer, tmp_path):
    """One GRPO run over two agents: a dict of factories, rows routed by the export's `environment` column; each
    agent's environment grades its own rows (one reward column per environment, both filled)."""
    from trl import GRPOConfig, GRPOTrainer
    from whilelab.core import AgentSpec
    from whilelab.cut import environment_factories
    spec = exports["spec"]
    lookups = AgentSpec("lookups", [t for t in spec.tools if t.name in ("find_customer", "get_order", "list_orders")],
                        spec.policy)
    sim = simulate(options=SimOptions(k_samples=4, search=None), tools=lookups.tools, policy=lookups.policy, progress=False)
    other = datasets.Dataset.from_list(cut_grpo(sim.rows, lookups).rows)
    mine = exports["grpo"]
    assert set(mine["environment"]) == {"shopfront"} and set(other["environment"]) == {"lookups"}
    both = datasets.concatenate_datasets([mine.select([0]), other.select([0]).cast(mine.features)] * 2)
    cfg = GRPOConfig(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=4, num_generations=2,
                     max_completion_length=16, learning_rate=1e-4, report_to=[], save_strategy="no", use_cpu=True,
                     seed=0, logging_steps=1, shuffle_dataset=False)
    tr = GRPOTrainer(tiny(tokenizer), args=cfg, train_dataset=both, processing_class=tokenizer,
                     environment_factory=environment_factories(spec, lookups))
    assert tr.train().global_step == 2
    logged = [h for h in tr.state.log_history if "rewards/ShopfrontEnv/mean" in h]
    assert logged and all(torch.isfinite(torch.tensor([h["rewards/ShopfrontEnv/mean"], h["rewards/LookupsEnv/mean"]])).all()
                          for h in logged), tr.state.log_history
