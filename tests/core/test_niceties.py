"""What makes the simulator pleasant at a prompt or in a notebook: reprs
that say what a simulator and a task are, a task found by its name, and
"did you mean" for a mistyped name (after the error's unchanged text)."""
import re

import pytest

import pysched as ps

PRESET = "linux-2.5.65"


def machine():
    sim = ps.Simulator(PRESET, cpus=2, record="series")
    sim.spawn(ps.programs.cpu_hog(), name="hog")
    sim.spawn(ps.programs.x_server(), name="X")
    sim.spawn(ps.Program().fork(ps.Program().run(ms=2), n=2).run(ms=30), name="cc")
    sim.spawn(ps.Program().run(ms=1), name="<b>odd & named</b>")
    sim.run(seconds=1.5)
    return sim


# ---------------------------------------------------------------- reprs

def test_a_simulators_repr_says_preset_time_machine_and_tasks():
    sim = machine()
    assert repr(sim) == ("<Simulator linux-2.5.65, t=1.500 s (1500 jiffies), 2 CPUs, HZ=1000, "
                         "2 live tasks, 4 exited, record='series'>")
    assert repr(ps.Simulator("linux-2.4.20")) == (
        "<Simulator linux-2.4.20, t=0.000 s (0 jiffies), 1 CPU, HZ=100, 0 live tasks, 0 exited, "
        "record='counters'>")


def test_a_simulators_html_has_its_facts_and_a_table_of_its_tasks():
    sim = machine()
    page = sim._repr_html_()
    assert "linux-2.5.65, t=1.500 s" in page and "<table>" in page
    for header in ("pid", "name", "state", "policy", "prio", "cpu_s", "sleep_avg"):
        assert f"<th>{header}</th>" in page
    assert "<td>X</td>" in page and "<td>interruptible</td>" in page and "<td>dead</td>" in page
    # a task's name is text, never markup
    assert "&lt;b&gt;odd &amp; named&lt;/b&gt;" in page and "<b>odd" not in page
    assert "no tasks yet" in ps.Simulator(PRESET)._repr_html_()


def test_a_simulators_html_counts_the_tasks_it_does_not_list():
    sim = ps.Simulator(PRESET)
    for _ in range(25):
        sim.spawn(ps.programs.cpu_hog())
    page = sim._repr_html_()
    assert page.count("<tr><td>") == 20 and "5 more tasks: sim.stats_frame() has them all" in page


class Busy:
    """A core that is running in another thread: every call is refused."""

    def __getattr__(self, name):
        raise ps.StateError("the simulator is running in another thread")


def test_a_busy_simulator_still_shows_itself():
    sim = machine()
    sim._core, core = Busy(), sim._core
    try:
        assert repr(sim) == "<Simulator linux-2.5.65, busy in another thread>"
        assert "busy in another thread" in sim._repr_html_()
    finally:
        sim._core = core


def test_a_task_views_html_lists_every_field():
    sim = machine()
    view = sim.task("X")
    page = view._repr_html_()
    assert "Task 2 &#x27;X&#x27;: interruptible" in page
    for field in vars(view):
        assert f"<td>{field}</td>" in page
    assert f"<td>{view.cpu_ns} ({view.cpu_ns / 1e9:.6f} s)</td>" in page
    assert "<td>exit_ns</td><td>alive</td>" in page
    assert repr(view) == f"TaskView(pid=2, name='X', state=interruptible, prio={view.prio})"


# ---------------------------------------------------------------- a task by its name

def test_a_task_is_found_by_its_name():
    sim = machine()
    assert sim.task("X").pid == 2 and sim.task("X").name == "X"
    assert vars(sim.task("hog")) == vars(sim.task(1))
    assert sim.task("<b>odd & named</b>").state == "dead"


def test_a_name_several_tasks_have_is_refused_with_their_pids():
    sim = machine()
    with pytest.raises(ValueError, match=re.escape(
            "3 tasks are named 'cc': pids 3 (dead), 5 (dead), 6 (dead); choose one with sim.task(pid)")):
        sim.task("cc")


def test_an_unknown_name_is_answered_with_the_close_names_or_all_of_them():
    sim = machine()
    with pytest.raises(KeyError, match=re.escape("no task named 'x'; did you mean 'X'?")):
        sim.task("x")
    with pytest.raises(KeyError, match=re.escape("no task named 'hgo'; did you mean 'hog'?")):
        sim.task("hgo")
    with pytest.raises(KeyError, match=re.escape(
            "no task named 'zzz'; names: hog, X, cc, <b>odd & named</b>")):
        sim.task("zzz")
    with pytest.raises(KeyError, match="no task named 'X': the simulator has no tasks yet"):
        ps.Simulator(PRESET).task("X")


# ---------------------------------------------------------------- did you mean

TYPOS = [
    ("preset", lambda: ps.Simulator("linux-2.5.56"),
     "unknown preset 'linux-2.5.56'; known presets: ", "'linux-2.5.65'"),
    ("preset of preset_params", lambda: ps.preset_params("houston-2030"),
     "unknown preset 'houston-2030'; known presets: ", "'houston-2003'"),
    ("parameter", lambda: ps.Simulator(PRESET, params={"max_sleep_agv": 5}),
     "unknown parameter 'max_sleep_agv' for policy o1; its parameters: ", "'max_sleep_avg'"),
    ("set_param", lambda: ps.Simulator(PRESET).set_param("starvation_limt", 5),
     "unknown parameter 'starvation_limt' for policy o1; its parameters: ", "'starvation_limit'"),
    ("series field", lambda: ps.Simulator(PRESET, series_fields=["prio", "sleepavg"]),
     "unknown task field 'sleepavg'; fields: ", "'sleep_avg'"),
    ("series() field", lambda: machine().series("time_slce"),
     "field 'time_slce' is not sampled; sampled: ", "'time_slice'"),
    ("init field", lambda: ps.Simulator(PRESET).spawn(ps.programs.cpu_hog(), init={"sleep_agv": 1}),
     "'sleep_agv' is not a o1 task field", "'sleep_avg'"),
    ("task field", lambda: machine().task(1).sleep_agv,
     "'TaskView' object has no attribute 'sleep_agv'", "'sleep_avg'"),
]


@pytest.mark.parametrize("what,call,text,meant", TYPOS, ids=[t[0] for t in TYPOS])
def test_a_mistyped_name_is_answered_with_what_was_probably_meant(what, call, text, meant):
    with pytest.raises((KeyError, AttributeError)) as refused:
        call()
    message = refused.value.args[0]
    assert message.startswith(text)  # the error's own text, unchanged
    assert re.search(rf"; did you mean {re.escape(meant)}( or '[^']+')*\?$", message)


def test_a_name_close_to_nothing_gets_no_suggestion():
    with pytest.raises(KeyError) as refused:
        ps.Simulator(PRESET, params={"zzzz": 5})
    assert "did you mean" not in refused.value.args[0]


def test_a_python_policys_init_fields_are_suggested_too():
    sim = ps.Simulator(ps.policy.examples.SleepCredit)
    field = ps.policy.examples.SleepCredit.task_fields[0]
    with pytest.raises(KeyError, match=re.escape(f"did you mean {field!r}?")):
        sim.spawn(ps.programs.cpu_hog(), init={field + "x": 1})
