"""Grading a run's rows on disk (`grade(view, ..., out=path)`): the rows and counts of grading in memory, with no more
than `GradeOptions.stream_rows` rows held at once, whatever the judge; cutting them a prompt at a time; and a delta of them, from values kept in one pass."""
import json, tracemalloc
import pytest
from whilelab.defaults import GradeOptions, SimOptions
from whilelab.delta import delta_report
from whilelab.cut import cut_dpo, cut_grpo, cut_kto, cut_rm, cut_sft
from whilelab.grade import GradedView, grade
from whilelab.rollout import RowView
from whilelab.simulate import simulate

COPIES = 16         # the example's 64 rows (one per cell), each written this many times under other ids: 1,024 rows


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    "A run's rows on disk as a `RowView`, and its spec."
    sim = simulate(options=SimOptions(k_samples=1, n_phrasings=1, search=None), progress=False)
    path, offsets, at = tmp_path_factory.mktemp("run") / "rows.jsonl", [], 0
    with open(path, "wb") as f:
        for copy in range(COPIES):
            for r in sim.rows:
                line = (json.dumps({**r, "situation_id": f"{r['situation_id']}-{copy}"}) + "\n").encode()
                f.write(line); offsets.append(at); at += len(line)
    return RowView(path, offsets), sim.spec


def by_turns(row):
    "A judge that reads each row (so `grade` cannot take its labels from the rules): passes an even conversation."
    return "pass" if len(row["messages"]) % 2 == 0 else "fail"


def peak_mb(f) -> float:
    "Peak traced memory of `f()`, in MB."
    tracemalloc.start()
    try: f(); return tracemalloc.get_traced_memory()[1] / 2**20
    finally: tracemalloc.stop()


@pytest.mark.parametrize("judge", [None, by_turns], ids=["rules", "reads-rows"])
def test_graded_on_disk_equals_graded_in_memory(run, judge, tmp_path):
    view, spec = run[0][:350], run[1]          # more than three parts of 100, the last one short
    held = grade(view, spec, judge)
    on_disk = grade(view, spec, judge, opts=GradeOptions(stream_rows=100), out=tmp_path / "graded.jsonl")
    assert isinstance(on_disk, GradedView) and len(on_disk) == len(held) == len(view)
    assert on_disk.report() == held.report()
    assert list(on_disk) == list(held)
    assert on_disk[5:7] == held[5:7]


@pytest.mark.parametrize("judge", [None, by_turns], ids=["rules", "reads-rows"])
def test_grading_to_a_file_holds_the_same_memory_for_eight_times_the_rows(run, judge, tmp_path):
    view, spec = run
    few, all_ = view[:len(view) // 8], view
    # parts of 50: the fewer rows fill two (a part short of full would hold less and flatter the figure)
    streamed = [peak_mb(lambda: grade(v, spec, judge, opts=GradeOptions(stream_rows=50), out=tmp_path / f"{len(v)}"))
                for v in (few, all_)]
    held = [peak_mb(lambda: grade(v, spec, judge)) for v in (few, all_)]
    # rows are ~18 KB each: held, the 896 more rows cost ~15 MB; streamed, 50 rows at a time, they cost nothing but
    # (rules) what a RowGrader keeps of each distinct row's grading, at most GRADES_KEPT (4,096) of them
    assert held[1] - held[0] > 10, held
    assert streamed[1] - streamed[0] < (1 if judge else (held[1] - held[0]) / 2), (streamed, held)


def test_an_existing_file_is_never_written_over(run, tmp_path):
    view, spec = run
    out = tmp_path / "graded.jsonl"
    out.write_text("mine\n")
    with pytest.raises(FileExistsError, match="exists.*Fix: pass another out="):
        grade(view[:10], spec, out=out)
    assert out.read_text() == "mine\n"


@pytest.fixture(scope="module")
def graded_on_disk(run, tmp_path_factory):
    "The run's rows graded to a file: a `GradedView`."
    view, spec = run
    return grade(view, spec, out=tmp_path_factory.mktemp("graded") / "graded.jsonl"), spec


@pytest.mark.parametrize("cut", [cut_sft, cut_dpo, cut_grpo, cut_rm, cut_kto], ids=lambda f: f.__name__)
def test_a_cut_of_rows_on_disk_equals_the_cut_of_them_in_memory(graded_on_disk, cut):
    view, spec = graded_on_disk
    on_disk, in_memory = cut(view, spec), cut(list(view), spec)
    assert (on_disk.kind, on_disk.rows, on_disk.dropped) == (in_memory.kind, in_memory.rows, in_memory.dropped)
    assert on_disk.rows or on_disk.dropped


def test_a_cut_of_rows_on_disk_holds_a_prompt_at_a_time(graded_on_disk):
    view, spec = graded_on_disk
    few, all_ = view[:len(view) // 8], view
    # one sample a prompt: every GRPO group is unanimous and dropped, so what a cut holds is all that is measured
    on_disk = [peak_mb(lambda: cut_grpo(v, spec)) for v in (few, all_)]
    in_memory = [peak_mb(lambda: cut_grpo(list(v), spec)) for v in (few, all_)]
    assert in_memory[1] - in_memory[0] > 10, in_memory
    assert on_disk[1] - on_disk[0] < 1, on_disk


@pytest.fixture(scope="module")
def judged_on_disk(run, tmp_path_factory):
    "The run's rows graded by a judge that reads each row, to a file: the 'after' of a delta."
    view, spec = run
    return grade(view, spec, by_turns, out=tmp_path_factory.mktemp("judged") / "graded.jsonl")


def test_a_delta_of_rows_on_disk_equals_the_delta_of_them_in_memory(graded_on_disk, judged_on_disk):
    before, _ = graded_on_disk
    on_disk = delta_report(before, judged_on_disk, must_not_regress=("argument_grounding",), n_resamples=500)
    in_memory = delta_report(list(before), list(judged_on_disk), must_not_regress=("argument_grounding",),
                             n_resamples=500)
    assert repr(on_disk) == repr(in_memory) and on_disk.excluded == in_memory.excluded
    assert on_disk.table().equals(in_memory.table())


def test_a_delta_of_rows_on_disk_holds_values_not_rows(graded_on_disk, judged_on_disk):
    before, after = graded_on_disk[0], judged_on_disk
    sizes = (len(before) // 8, len(before))
    on_disk = [peak_mb(lambda: delta_report(before[:n], after[:n], n_resamples=100)) for n in sizes]
    in_memory = [peak_mb(lambda: delta_report(list(before[:n]), list(after[:n]), n_resamples=100)) for n in sizes]
    # ~18 KB a row held, against a value array per situation and metric kept (~100 bytes each; here every row is a
    # situation of its own, the worst case): 1,792 more rows
    assert in_memory[1] - in_memory[0] > 20, in_memory
    assert on_disk[1] - on_disk[0] < (in_memory[1] - in_memory[0]) / 5, (on_disk, in_memory)
