"""What a script's argparse options hold when it runs as its author intended.

`--cuda`/`--no-cuda` flags are user choices (true on a GPU machine, false on a CPU-only one),
`--device` values are a device the user chose, and an integer `--gpu` option is a GPU index.
The flow binds `args.<dest>` to these values (Program.parser_method).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

import libcst as cst

from devfix.analysis import operations
from devfix.analysis import torch_api as api
from devfix.analysis.values import HOST, UNKNOWN, Kind, Place, Value, condition

POSITIVE_WORDS = ("cuda", "gpu", "ngpu", "accel")


def collect_options(calls: Iterable[cst.Call]) -> tuple[dict[str, Value], set[str], set[str]]:
    """Every `add_argument(...)` of the file: its value by dest, the dests that hold a GPU index,
    and the names given as a default (`default=DEVICE`: a constant the option overrides)."""
    options: dict[str, Value] = {}
    index_options: set[str] = set()
    defaults: set[str] = set()
    for call in calls:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            continue
        defaults.update(
            arg.value.value
            for arg in call.args
            if arg.keyword is not None and arg.keyword.value == "default" and isinstance(arg.value, cst.Name)
        )
        flags = [flag for flag in (operations.string_of(a.value) for a in call.args if a.keyword is None) if flag]
        if not flags:
            continue
        dest = _keyword_string(call, "dest")
        long = next((f for f in flags if f.startswith("--")), flags[0])
        dest = dest or long.lstrip("-").replace("-", "_")
        options[dest] = _option_value(dest, call)
        if _integer_option(call):
            index_options.add(dest)
    return options, index_options, defaults


def _keyword_string(call: cst.Call, keyword: str) -> str | None:
    return next(
        (operations.string_of(a.value) for a in call.args if a.keyword is not None and a.keyword.value == keyword), None
    )


def _chooses_a_device(call: cst.Call) -> bool:
    """`choices=["GPU", "CPU"]`: whatever the option is called, its value names a device."""
    choices = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "choices"), None)
    if not isinstance(choices, (cst.List, cst.Tuple, cst.Set)):
        return False
    words = {(operations.string_of(e.value) or "").lower() for e in choices.elements}
    return "cpu" in words and bool(words & {"gpu", "cuda"})


def _integer_option(call: cst.Call) -> bool:
    """`add_argument(..., type=int)` or an integer default: a GPU index (`-1` for the CPU), which
    is not a device where one is needed (`map_location=-1` fails)."""
    for arg in call.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "type" and isinstance(arg.value, cst.Name) and arg.value.value == "int":
            return True
        value = arg.value.expression if isinstance(arg.value, cst.UnaryOperation) else arg.value
        if arg.keyword.value == "default" and isinstance(value, cst.Integer):
            return True
    return False


def _always_true(call: cst.Call) -> bool:
    """An option no command line turns off. `add_argument("--gpu_mode", type=bool,
    default=True)`: argparse calls `bool` on the text given, and every text but the empty one is
    true. `add_argument("--cuda", action="store_true", default=True)`: giving the flag stores
    True, and not giving it leaves the default, True (MedicalZooPytorch's scripts)."""
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    kind, default = keywords.get("type"), keywords.get("default")
    typed_bool = isinstance(kind, cst.Name) and kind.value == "bool"
    if default is None or not (typed_bool or _keyword_string(call, "action") == "store_true"):
        return False
    if isinstance(default, cst.Name):
        return default.value == "True"
    if isinstance(default, cst.Integer):
        return default.evaluated_value != 0
    return typed_bool and bool(operations.string_of(default))


def _none_unless_given(call: cst.Call) -> bool:
    """The option has no default, is not required and stores what is given: None without it."""
    given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    required = given.get("required")
    return (
        "default" not in given
        and "action" not in given
        and not (isinstance(required, cst.Name) and required.value == "True")
    )


def _option_value(dest: str, call: cst.Call) -> Value:
    """What an argparse option holds when the program runs on a GPU machine as intended."""
    lowered = dest.lower()
    negative = api.is_negative_flag(dest)
    positive = any(word in lowered for word in POSITIVE_WORDS)
    if ("device" in lowered and not positive) or _chooses_a_device(call):
        if _none_unless_given(call):
            # `parser.add_argument("--device")`: None where the command line leaves it out, and
            # `model.to(None)` moves nothing (CLIP-Driven-Universal-Model's test.py)
            return UNKNOWN
        # whatever its default, the user's device; `type=int`: a GPU index (GraphMAE's `--device 0`)
        return Value(Kind.DEVICE, Place.DEVICE, flag="choice", index=_integer_option(call))
    if _always_true(call):
        return condition(True, True, "fixed")  # `type=bool` or `store_true` with `default=True`
    if negative:
        # `--no-cuda` (`store_true`, or `type=bool, default=False`): given where there is no GPU
        return condition(False, True, "choice")
    if positive:
        return condition(True, False, "choice")  # `--cuda`, `--gpu 0`: given where there is one
    return HOST


def with_written_attributes(env: Mapping[str, Value], name: str, value: Value) -> Value:
    """`args` after `args.use_cuda = torch.cuda.is_available()`: the options as the code set
    them (`env` keeps them as `args.use_cuda`), which a call (`main(args)`) hands on to the
    function it calls."""
    if not value.attrs:
        return value  # a namespace of unknown options: a few written ones would pass for all of them
    prefix = f"{name}."
    written = {key[len(prefix) :]: v for key, v in env.items() if key.startswith(prefix)}
    if not written:
        return value
    kept = tuple((key, v) for key, v in value.attrs if key not in written)
    return replace(value, attrs=kept + tuple(written.items()))
