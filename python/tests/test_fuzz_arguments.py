"""Hostile arguments to every public function, made from a fixed seed (issue 35).

Each call must return or raise a perflow.Error, TypeError or ValueError (ImportError for a
missing NumPy aside): never another exception, never a crash of the interpreter (which
would end this test run). The same seed makes the same calls, so a failure names the call
that makes it again.
"""
import math
import random
import reprlib

import pytest

import perflow

SEED = 35
CALLS = 2000

CONFIG = {"pipeline": {"schedule": "1f1b", "stages": 2, "microbatches": 4},
          "costs": {"forward": 10, "backward": 20, "weight": 15}}

ACCEPTED = (perflow.Error, TypeError, ValueError)

_short = reprlib.Repr()
_short.maxlevel = 3
_short.maxstring = 40
_short.maxother = 40


def short(value):
    """A repr that stays short for a cycle or 5,000 levels of lists."""
    return _short.repr(value)


def hostile_scalars():
    return [None, True, 0, -1, 1, 2**63, -(2**63), 2**64, 10**40, 0.5, -0.0, math.nan,
            math.inf, -math.inf, "", "x", "\udcff", "a\x00b", "1f1b", "1315us", "-1ns",
            "1e309", "/pipeline/stages=8", "/pipeline/stages=\udcff", b"", b"\xff", b"1f1b",
            bytearray(b"x"), [], {}, (), object(), "é" * 300, "/" * 200, "~2", "-"]


def hostile_config(rng):
    """A config dict with one field replaced, or a structure json cannot encode."""
    choice = rng.randrange(7)
    config = {"pipeline": dict(CONFIG["pipeline"]), "costs": dict(CONFIG["costs"])}
    if choice == 0:
        config["pipeline"][rng.choice(["schedule", "stages", "microbatches", "chunks"])] = (
            rng.choice(hostile_scalars()))
    elif choice == 1:
        config["costs"][rng.choice(["forward", "backward", "weight", "memory"])] = (
            rng.choice(hostile_scalars()))
    elif choice == 2:
        cycle = {}
        cycle["self"] = cycle
        config["costs"] = cycle
    elif choice == 3:
        deep = []
        for _ in range(rng.choice([10, 1000, 5000])):
            deep = [deep]
        config["description"] = deep
    elif choice == 4:
        config[rng.choice(["\udcff", "", "pipeline\x00"])] = 1
    elif choice == 5:
        return rng.choice(hostile_scalars())
    return config


def calls(rng):
    """(description, callable) pairs: every public function with a hostile argument."""
    scalar = rng.choice(hostile_scalars())
    config = hostile_config(rng)
    overrides = rng.choice([None, [scalar], {"/pipeline/stages": scalar}, {scalar: 1}
                            if isinstance(scalar, (str, int)) else {"/x": scalar}, scalar])
    return [
        (f"simulate({short(config)}, set={short(overrides)})",
         lambda: perflow.simulate(config, set=overrides)),
        (f"summary({short(config)})", lambda: perflow.summary(config)),
        (f"load_config({short(config)})", lambda: perflow.load_config(config)),
        (f"TaskCosts(forward={short(scalar)})", lambda: perflow.TaskCosts(forward=scalar)),
        (f"build_schedule({short(scalar)}, ...)",
         lambda: perflow.build_schedule(scalar, 2, 4, perflow.TaskCosts(forward=10))),
        (f"build_schedule('1f1b', {short(scalar)}, 4, ...)",
         lambda: perflow.build_schedule("1f1b", scalar, 4, perflow.TaskCosts(forward=10))),
        (f"format_duration({short(scalar)})", lambda: perflow.format_duration(scalar)),
        (f"format_memory({short(scalar)})", lambda: perflow.format_memory(scalar)),
        (f"filter(graph, {short(scalar)})",
         lambda: perflow.filter(perflow.build_schedule("1f1b", 2, 4,
                                                       perflow.TaskCosts(forward=10)), scalar)),
        (f"costs({short(scalar)})", lambda: perflow.costs(scalar)),
        (f"sweep({short(config)})", lambda: perflow.sweep(config)),
        (f"search({short(config)})", lambda: perflow.search(config)),
        (f"plot({short(scalar)})", lambda: perflow.plot(scalar)),
    ]


def test_hostile_arguments_raise_named_errors_only():
    rng = random.Random(SEED)
    seen = 0
    for index in range(CALLS):
        batch = calls(rng)
        description, call = batch[rng.randrange(len(batch))]
        try:
            call()
        except ACCEPTED:
            pass
        except Exception as e:  # noqa: BLE001 (what the test is about)
            pytest.fail(f"call {index} of seed {SEED}: {description} raised "
                        f"{type(e).__name__}: {e}")
        seen += 1
    assert seen == CALLS
