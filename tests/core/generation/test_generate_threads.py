"""The thread rule (issue 39): each call chooses its count from its largest op and the load now; a toy takes
1 thread, a big model on an idle machine every core, a busy machine fewer; cached == uncached greedy tokens
hold whatever counts the two paths run on. Rules, not timings (benchmarks/speed/threads.py times them)."""

from __future__ import annotations

import pytest
import torch
from generate_support import ids, model_for, tiny

from tui_lab import cpu_threads
from tui_lab.bench.kv_speed import compare_generation
from tui_lab.generation import generate, threads
from tui_lab.generation.decoder_state import DecoderState
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings
from tui_lab.presets import load_preset

BIG = 1 << 30  # an op far past SPLIT_MACS


class NoSpecials:
    """A codec with no bos/eos: every run makes exactly the tokens asked for."""

    bos_id = eos_id = None


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv("TUI_LAB_DECODE_THREADS", raising=False)


def fake_load(monkeypatch, cores: int, others: float) -> None:
    """The machine as `load_now` will see it: `cores` usable, `others` runnable tasks of other processes."""
    monkeypatch.setattr(cpu_threads, "load_now", lambda: cpu_threads.Load(cores, others, "fake", None))


def test_torch_threads_restores_the_count_even_after_an_error():
    before = torch.get_num_threads()
    other = 2 if before == 1 else 1
    with threads.torch_threads(other) as inside:
        assert inside == torch.get_num_threads() == other
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), threads.torch_threads(other):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with threads.torch_threads(None) as inside:  # None: torch's count, untouched
        assert inside == before


def test_the_english_toy_decodes_on_one_thread_when_busy_and_tries_two_when_idle(monkeypatch):
    """Its cached steps are too small for the rule to tell: beside busy processes 1 thread, untried; on idle cores
    the first steps try 1 and 2 (2 threads gained on an Intel Xeon and lost on an AMD EPYC)."""
    toy = model_for(load_preset("gpt2-toy-english"))
    fake_load(monkeypatch, 2, 4.0)
    with threads.torch_threads(2):
        plan = threads.decode_plan(toy, use_cache=True, prompt_tokens=16)
    assert plan.steps.threads == 1 and plan.steps.trial == () and "too small" in plan.steps.why
    assert plan.steps.grain < cpu_threads.SPLIT_MACS and plan.prefill.threads == 1  # no core free for the prompt
    fake_load(monkeypatch, 2, 0.0)
    with threads.torch_threads(2):
        plan = threads.decode_plan(toy, use_cache=True, prompt_tokens=16)
        assert plan.steps.trial == (1, 2) and "try 1 and 2" in plan.steps.why
        assert plan.prefill.threads == 2  # 16 prompt tokens x 128 x 1024: worth sharing
        assert threads.decode_plan(toy, use_cache=True, prompt_tokens=1).prefill.threads == 1
        assert threads.decode_plan(toy, use_cache=False).steps.trial == ()  # uncached passes: the rule knows
    with threads.torch_threads(1):  # a one-thread ceiling: nothing to try
        assert threads.decode_plan(toy, use_cache=True).steps.trial == ()


def test_a_plan_tries_each_count_then_runs_its_steps_on_the_faster(monkeypatch):
    """TRIAL_BLOCK steps on each count, the first of each block untimed (the pool wakes), then the faster one."""
    clock = [0.0]
    monkeypatch.setattr(threads.time, "perf_counter", lambda: clock[0])
    step_s = {1: 3e-4, 2: 2e-4}

    def step() -> int:
        clock[0] += step_s[torch.get_num_threads()]
        return torch.get_num_threads()

    choice = cpu_threads.Choice(1, "test", 0, 2, None, trial=(1, 2))
    with threads.torch_threads(2):
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        ran = [plan.run(i, step) for i in range(1 + 2 * threads.TRIAL_BLOCK + 3)]
    block = threads.TRIAL_BLOCK
    assert ran == [2] + [1] * block + [2] * block + [2] * 3  # prefill, trial of 1, trial of 2, settled on 2
    assert plan.tried_s == pytest.approx({1: 3e-4, 2: 2e-4}) and plan.threads == plan.settled == 2
    assert plan.to_dict()["tried_ms"] == pytest.approx({"1": 0.3, "2": 0.2}) and plan.to_dict()["threads"] == 2
    step_s[2] = 5e-4  # where 2 threads lose (an AMD EPYC's toy steps): the rest on 1
    with threads.torch_threads(2):
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        ran = [plan.run(i, step) for i in range(1 + 2 * block + 3)]
    assert ran[-3:] == [1, 1, 1] and plan.settled == 1


def test_a_long_run_tries_again_as_its_context_grows_and_follows_the_change(monkeypatch):
    """Trials at step 1, TRIAL_AGAIN and its doublings: 2 threads faster at first, slower from step 64 on (a
    longer context, or another process started): the run moves to 1 thread after the second trial."""
    clock = [0.0]
    monkeypatch.setattr(threads.time, "perf_counter", lambda: clock[0])
    block, again = threads.TRIAL_BLOCK, threads.TRIAL_AGAIN

    def step(index: int) -> int:
        n = torch.get_num_threads()
        clock[0] += {1: 3e-4, 2: 2e-4 if index < again else 6e-4}[n]
        return n

    choice = cpu_threads.Choice(1, "test", 0, 2, None, trial=(1, 2))
    with threads.torch_threads(2):
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        ran = [plan.run(i, lambda i=i: step(i)) for i in range(2 * again + 2 * block + 2)]
    assert ran[1 + 2 * block:again] == [2] * (again - 1 - 2 * block)  # the first trial's winner
    assert ran[again:again + 2 * block] == [1] * block + [2] * block  # tried again at step 64
    assert ran[again + 2 * block:2 * again] == [1] * (again - 2 * block) and plan.settled == 1
    assert ran[2 * again:2 * again + 2 * block] == [1] * block + [2] * block and plan.trials == 3
    assert plan.to_dict()["trials"] == 3


def test_load_that_comes_after_a_trial_sends_the_steps_to_one_thread_until_the_next(monkeypatch):
    """2 threads won the first trial; from step 20 another process holds a core and a 2-thread step takes 8x its
    tried time (more than twice the 1-thread step): after SLOW_STEPS such steps in a row the run goes to 1 thread,
    and the trial at TRIAL_AGAIN looks again. One slow step alone (a page fault, a collection) moves nothing."""
    clock = [0.0]
    monkeypatch.setattr(threads.time, "perf_counter", lambda: clock[0])
    block, again, busy_from = threads.TRIAL_BLOCK, threads.TRIAL_AGAIN, 20
    hiccup = 15

    def step(index: int) -> int:
        n = torch.get_num_threads()
        slow = index >= busy_from or index == hiccup
        clock[0] += {1: 3e-4, 2: 16e-4 if slow else 2e-4}[n]
        return n

    choice = cpu_threads.Choice(1, "test", 0, 2, None, trial=(1, 2))
    with threads.torch_threads(2):
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        ran = [plan.run(i, lambda i=i: step(i)) for i in range(again + 2 * block + 2)]
    assert ran[1 + 2 * block:busy_from + threads.SLOW_STEPS] == [2] * (busy_from + threads.SLOW_STEPS - 1 - 2 * block)
    assert ran[busy_from + threads.SLOW_STEPS:again] == [1] * (again - busy_from - threads.SLOW_STEPS)
    assert plan.fell_back == [busy_from + threads.SLOW_STEPS - 1]  # not at the hiccup
    assert ran[again:again + 2 * block] == [1] * block + [2] * block  # the next trial looks again: 1 wins
    assert plan.settled == 1 and plan.to_dict()["fell_back_at"] == [busy_from + threads.SLOW_STEPS - 1]


def test_steps_on_the_fewest_are_not_watched(monkeypatch):
    """1 thread won: its steps are not timed between trials, however slow (there is nothing fewer to go to)."""
    clock = [0.0]
    monkeypatch.setattr(threads.time, "perf_counter", lambda: pytest.fail("timed") if len(clock) > 1 else clock[0])
    choice = cpu_threads.Choice(1, "test", 0, 2, None, trial=(1, 2))

    def step() -> int:
        clock[0] += {1: 2e-4, 2: 3e-4}[torch.get_num_threads()]
        return torch.get_num_threads()

    with threads.torch_threads(2):
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        ran = [plan.run(i, step) for i in range(1 + 2 * threads.TRIAL_BLOCK)]
        clock.append(None)  # from here a clock read fails the test
        ran += [plan.run(i, step) for i in range(1 + 2 * threads.TRIAL_BLOCK, threads.TRIAL_AGAIN)]
    assert set(ran[1 + 2 * threads.TRIAL_BLOCK:]) == {1} and plan.fell_back == []


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_a_run_whose_trial_switches_counts_gives_the_same_tokens_and_the_count_back(family):
    model = model_for(tiny(family, dropout=0.0))
    prompt = ids(1, 6)
    bos = {} if family == "decoder-only" else {"bos_id": 1}
    plain = generate(model, prompt, 2 * threads.TRIAL_BLOCK + 6, temperature=0.0, **bos)
    before = torch.get_num_threads()
    for trial in ((1, 2), (2, 1)):
        choice = cpu_threads.Choice(1, "test", 0, 2, None, trial=trial)
        plan = threads.DecodePlan(cpu_threads.Choice(2, "test", 0, 2, None), choice)
        tried = generate(model, prompt, 2 * threads.TRIAL_BLOCK + 6, temperature=0.0, plan=plan, **bos)
        assert torch.equal(tried, plain) and set(plan.tried_s) == {1, 2} and torch.get_num_threads() == before
    uncached = generate(model, prompt, 2 * threads.TRIAL_BLOCK + 6, temperature=0.0, use_cache=False, **bos)
    assert torch.equal(uncached, plain)


def test_a_big_op_takes_every_core_on_an_idle_machine_and_fewer_beside_busy_ones(monkeypatch):
    fake_load(monkeypatch, 4, 0.0)
    assert cpu_threads.choose(BIG, 4, "UNSET_VAR").threads == 4
    fake_load(monkeypatch, 4, 1.0)  # one busy process: three cores left
    assert cpu_threads.choose(BIG, 4, "UNSET_VAR").threads == 3
    fake_load(monkeypatch, 2, 1.0)  # 2 cores, one held by another process
    assert cpu_threads.choose(BIG, 2, "UNSET_VAR").threads == 1
    fake_load(monkeypatch, 2, 7.0)  # the shared machine at load 7: never below 1
    chosen = cpu_threads.choose(BIG, 2, "UNSET_VAR")
    assert chosen.threads == 1 and "0 of 2 cores free" in chosen.why
    fake_load(monkeypatch, 8, 0.0)  # a ceiling a person set stays the ceiling
    assert cpu_threads.choose(BIG, 2, "UNSET_VAR").threads == 2


def test_a_core_counts_as_free_when_others_leave_three_quarters_of_it():
    assert cpu_threads.Load(2, 0.2, "fake", None).free == 2
    assert cpu_threads.Load(2, 0.3, "fake", None).free == 1
    assert cpu_threads.Load(2, 1.2, "fake", None).free == 1
    assert cpu_threads.Load(2, 1.3, "fake", None).free == 0


def test_the_choice_follows_the_load_from_call_to_call(monkeypatch):
    """Nothing is kept: a call after the load rose chooses again (the stale choice of issue 39)."""
    model = model_for(load_preset("gpt2-toy"))
    with threads.torch_threads(2):
        fake_load(monkeypatch, 2, 0.0)
        assert threads.decode_threads(model, use_cache=False) == 2  # 128 tokens x 128 x 512: worth sharing
        fake_load(monkeypatch, 2, 3.0)
        assert threads.decode_threads(model, use_cache=False) == 1
        fake_load(monkeypatch, 2, 0.0)
        assert threads.decode_threads(model, use_cache=False) == 2


def test_the_override_and_a_one_thread_ceiling_skip_reading_the_load(monkeypatch):
    monkeypatch.setattr(cpu_threads, "load_now", lambda: pytest.fail("read the load"))
    model = model_for(load_preset("gpt2-toy"))
    with threads.torch_threads(1):
        assert threads.decode_threads(model, use_cache=False) == 1
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "3")
    choice = threads.decode_choice(model, use_cache=False)
    assert choice.threads == 3 and choice.why == "forced by TUI_LAB_DECODE_THREADS"


def test_load_now_counts_the_others_running_tasks_not_this_process(monkeypatch):
    monkeypatch.setattr(cpu_threads, "usable_cores", lambda: 2)
    monkeypatch.setattr(cpu_threads, "_procs_running", lambda: (4, 2))
    monkeypatch.setattr(cpu_threads, "_own_running", lambda: 1)
    monkeypatch.setattr(cpu_threads, "SAMPLE_GAP_S", 0.0)
    load = cpu_threads.load_now()
    assert load.others == 3 and load.source == "procs_running"
    monkeypatch.setattr(cpu_threads, "_procs_running", lambda: (33, 64))  # a container on a 64-CPU host
    assert cpu_threads.load_now().others == pytest.approx(32 * 2 / 64)
    monkeypatch.setattr(cpu_threads, "_procs_running", lambda: (None, 0))  # no /proc: the load average
    monkeypatch.setattr(cpu_threads.os, "getloadavg", lambda: (2.5, 0.0, 0.0), raising=False)
    assert cpu_threads.load_now() == cpu_threads.Load(2, 1.5, "loadavg", 2.5)


def test_the_real_load_reading_gives_a_count_and_says_why():
    load = cpu_threads.load_now()
    assert load.cores >= 1 and load.others >= 0 and load.free >= 0
    choice = cpu_threads.choose(BIG, load.cores, "UNSET_VAR", load)
    assert 1 <= choice.threads <= load.cores and choice.to_dict()["load"]["free"] == load.free


@pytest.mark.parametrize("family", ["decoder-only", "encoder-decoder"])
def test_cached_equals_uncached_when_the_paths_run_on_different_counts(monkeypatch, family):
    counts = {True: 1, False: 2}

    def policy(model, use_cache, rows=1, prompt_tokens=1):
        choice = cpu_threads.Choice(counts[use_cache], "test", 0, 2, None)
        return threads.DecodePlan(choice, choice)

    monkeypatch.setattr("tui_lab.bench.kv_speed.decode_plan", policy)
    before = torch.get_num_threads()
    report = compare_generation(model_for(tiny(family)), prompt_len=5, new_tokens=(3, 12), repeats=1)
    assert all(run.identical for run in report.runs) and report.threads == {"cached": 1, "uncached": 2}
    assert report.to_dict()["thread_choice"]["uncached"]["why"] == "test" and torch.get_num_threads() == before


def test_complete_runs_on_the_choice_says_it_and_gives_the_count_back(monkeypatch):
    model = model_for(tiny(dropout=0.0))
    used = []
    real = DecoderState.logits

    def spy(self, *args, **kwargs):
        used.append(torch.get_num_threads())  # the count each pass runs on
        return real(self, *args, **kwargs)

    monkeypatch.setattr(DecoderState, "logits", spy)
    monkeypatch.setenv("TUI_LAB_DECODE_THREADS", "2")
    before = 1 if torch.get_num_threads() != 1 else 3
    prompt = ids(1, 6)
    settings = [GenerationSettings(20, temperature=0.0, use_cache=cache) for cache in (True, False)]
    with threads.torch_threads(before):
        cached, uncached = (complete(model, NoSpecials(), prompt[0].tolist(), s) for s in settings)
        assert used == [2] * 40 and torch.get_num_threads() == before
    assert cached.threads["threads"] == 2 and cached.threads["why"] == "forced by TUI_LAB_DECODE_THREADS"
    assert cached.threads["prefill"]["threads"] == 2 and cached.threads["tried_ms"] == {}
    expected = generate(model, prompt, 20, temperature=0.0)[0, 6:].tolist()
    assert cached.ids == uncached.ids == expected


def test_complete_says_the_trial_it_ran_and_beam_search_runs_untried(monkeypatch):
    fake_load(monkeypatch, 2, 0.0)
    model = model_for(load_preset("gpt2-toy-english"))
    prompt = ids(1, 16)[0].tolist()
    with threads.torch_threads(2):
        done = complete(model, NoSpecials(), prompt, GenerationSettings(2 * threads.TRIAL_BLOCK + 2, temperature=0.0))
        beams = complete(model, NoSpecials(), prompt, GenerationSettings(4, temperature=0.0, beam_size=2))
        assert torch.get_num_threads() == 2
    said = done.threads
    assert tuple(said["trial"]) == (1, 2) and set(said["tried_ms"]) == {"1", "2"} and said["threads"] in (1, 2)
    assert said["threads"] == min((1, 2), key=lambda n: said["tried_ms"][str(n)]) and said["prefill"]["threads"] == 2
    assert beams.threads["trial"] == () and beams.threads["threads"] == 1 and "prefill" not in beams.threads
    assert beams.threads["why"].startswith("ops too small to share out") and "try" not in beams.threads["why"]
