"""Calls that ask for a GPU through what they pass a function, or leave at its default.

Some helpers put their result on the GPU unless told otherwise:

    def totensor(data, cuda=True):
        tensor = torch.from_numpy(data)
        if cuda:
            tensor = tensor.cuda()
        return tensor

The `.cuda()` is guarded (DEV002 leaves guarded code), but `totensor(x)` asks for a GPU as
surely as `x.cuda()`: a program that calls it so cannot run on a CPU-only machine whatever
devfix rewrites elsewhere, and rewriting its other hard-coded CUDA is churn (reach.py). The
same holds for a call that passes GPU 0 to a parameter the callee moves tensors to
(`model.sample(144, 0)` where `sample` does `z.to(current_device)`).

Read off the syntax of the callee alone, so a summary carries it to other files (linking.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from devfix.analysis import arguments
from devfix.analysis.collect import Collected
from devfix.analysis.scopes import dotted_name
from devfix.analysis.torch_api import (
    AVAILABILITY_CHECKS,
    CUDA_TENSOR_TYPES,
    GPU_INDEX_NAME,
    GPU_MEASURING,
    GPU_MEMORY_READOUTS,
)
from devfix.analysis.tree import chosen_gpu, cuda_index, cuda_only_names, kept_parameters
from devfix.analysis.values import Kind, Value


def cuda_switch_params(data: Collected, function: cst.FunctionDef) -> frozenset[tuple[str, bool]]:
    """Parameters with a `True` default that guard a `.cuda()` of the function's own
    body (`if cuda: x = x.cuda()`), or, for a constructor, a GPU device by default that it keeps
    for its methods' moves; each with whether its default turns the GPU on. Leaving one that
    is on at its default, or passing `True`, asks for a GPU. A flag whose `False` default picks
    the GPU (`nms_gpu(dets) if force_cpu == False else nms_cpu(dets)`) is named `not force_cpu`:
    leaving it, or passing `False`, asks."""
    return _statement_switches(data, function) | _chosen_switches(data, function)


def _statement_switches(data: Collected, function: cst.FunctionDef) -> frozenset[tuple[str, bool]]:
    # only a flag on by default: one off by default that a caller turns on may guard a
    # `.cuda()` that touches nothing (DeepLab's weightless loss), or be no GPU switch at all
    # (torch-light's `if get_pos: position = position.cuda()`, a bug)
    switches = {name: on for name, on in bool_defaults(function).items() if on}
    devices = gpu_defaults(function)
    if not switches and not devices:
        return frozenset()
    found = set()
    calls = _cuda_calls(data, function) if switches else []
    for call in calls:
        branch = _guarding_if(data, call, function)
        guard = branch.test.value if branch is not None and isinstance(branch.test, cst.Name) else None
        # not where the `else:` moves to the GPU too (FBA_Matting's `np_to_torch(x,
        # permute=True)`): that flag picks something else, and the function always asks
        if guard in switches and not (branch is not None and _moves_in(data, branch.orelse, calls)):
            found.add(guard)
    found |= _moved_to_gpu_defaults(data, function, devices) if devices else set()
    owner = data.parent.get(id(function))
    klass = data.parent.get(id(owner)) if isinstance(owner, cst.IndentedBlock) else None
    if function.name.value == "__init__" and isinstance(klass, cst.ClassDef):
        found |= _kept_switches(data, function, klass, set(switches)) if switches else set()
        found |= _kept_gpu_devices(data, function, klass, devices) if devices else set()
    return frozenset((name, switches.get(name, True)) for name in found)


def _chosen_switches(data: Collected, function: cst.FunctionDef) -> frozenset[tuple[str, bool]]:
    """The flags of `gpu_call(...) if flag else cpu_call(...)` (either polarity, either side)
    whose default picks the side that asks for a GPU: a `.cuda()`, or a name bound only where
    CUDA is available (Faster R-CNN's `nms`, whose `nms_gpu` is imported so)."""
    defaults = bool_defaults(function)
    if not defaults:
        return frozenset()
    only = cuda_only_names(data)
    found = set()
    for call in data.within(data.calls, function):
        func = call.func
        if not ((isinstance(func, cst.Name) and func.value in only) or is_cuda_call(call)):
            continue
        choice = _enclosing_choice(data, call, function)
        flag = _flag_of(choice.test) if choice is not None else None
        if choice is None or flag is None or flag[0] not in defaults:
            continue
        name, taken_when = flag
        gpu_when = taken_when if _moves_in(data, choice.body, [call]) else not taken_when
        if defaults[name] == gpu_when:
            found.add((name if gpu_when else f"not {name}", True))
    return frozenset(found)


def is_cuda_call(call: cst.Call) -> bool:
    """`x.cuda(...)`, by its syntax alone."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "cuda"


def _enclosing_choice(data: Collected, node: cst.CSTNode, function: cst.FunctionDef) -> cst.IfExp | None:
    """The nearest conditional expression that holds `node` in one of its branches, within the
    function's own statements."""
    child, parent = node, data.parent.get(id(node))
    while parent is not None and parent is not function and not isinstance(parent, (cst.Lambda, cst.FunctionDef)):
        if isinstance(parent, cst.IfExp):
            return parent if child is not parent.test else None
        child, parent = parent, data.parent.get(id(parent))
    return None


def _flag_of(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """The flag a test reads and the value that makes it true: `cuda` (True), `not force_cpu`,
    `force_cpu == False`, `force_cpu is False` (False), `use_gpu == True` (True)."""
    if isinstance(test, cst.Name):
        return test.value, True
    if (
        isinstance(test, cst.UnaryOperation)
        and isinstance(test.operator, cst.Not)
        and isinstance(test.expression, cst.Name)
    ):
        return test.expression.value, False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        target = test.comparisons[0]
        constant = target.comparator
        if isinstance(target.operator, (cst.Equal, cst.Is)) and isinstance(constant, cst.Name):
            if constant.value in ("True", "False"):
                return test.left.value, constant.value == "True"
    return None


def bool_defaults(function: cst.FunctionDef) -> dict[str, bool]:
    """The function's parameters with a `True` or `False` default, and that default."""
    return {
        p.name.value: p.default.value == "True"
        for p in (*function.params.params, *function.params.kwonly_params)
        if isinstance(p.default, cst.Name) and p.default.value in ("True", "False")
    }


def gpu_defaults(function: cst.FunctionDef) -> set[str]:
    """The function's parameters with a GPU device as their default (`device="cuda"`)."""
    every = (*function.params.params, *function.params.kwonly_params)
    return {p.name.value for p in every if p.default is not None and _gpu_string(p.default)}


def _gpu_string(node: cst.BaseExpression) -> bool:
    """`"cuda"`, `"cuda:0"`, or `torch.device("cuda")` written as a default; or a CUDA tensor
    type, which builds on the GPU (`tensor=torch.cuda.FloatTensor` of a GAN loss,
    `tensor_type="torch.cuda.FloatTensor"` of a depth model's warping)."""
    if (
        isinstance(node, cst.Call)
        and node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "device"
    ):
        node = node.args[0].value
    if isinstance(node, cst.SimpleString) and node.evaluated_value in CUDA_TENSOR_TYPES:
        return True
    return dotted_name(node) in CUDA_TENSOR_TYPES or (
        isinstance(node, cst.SimpleString) and arguments.names_a_gpu(node)
    )


def _kept_gpu_devices(data: Collected, init: cst.FunctionDef, klass: cst.ClassDef, params: set[str]) -> set[str]:
    """A constructor's `device="cuda"` kept as an attribute (`self.device = device`) that a
    method moves tensors to (`tokens.to(self.device)`, latent diffusion's `FrozenCLIPEmbedder`):
    building the object with the default asks for a GPU as soon as that method runs."""
    kept = {attr: param for attr, param in kept_parameters(init).items() if param in params}
    found = kept_device_params(data, klass, kept)
    for call in _cuda_calls(data, klass) if kept else ():
        # `if self.device == "cuda": image = image.cuda()` (DeepRobust's `BaseAttack`)
        attr = _compared_to_a_gpu(_guarding_test(data, call, klass))
        if attr in kept:
            found.add(kept[attr])
    return found


def kept_device_params(data: Collected, klass: cst.ClassDef, kept: dict[str, str]) -> set[str]:
    """The constructor parameters, among `kept` (attribute -> parameter), whose attribute a
    method of the class moves tensors to (`tokens.to(self.device)`, `to_tensor(adj,
    device=self.device)`): what a caller passes there is where the object puts its data."""
    found = set()
    for call in data.within(data.calls, klass) if kept else ():
        for target in _device_targets(call):
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.attr.value in kept:
                found.add(kept[target.attr.value])
    return found


def _compared_to_a_gpu(test: cst.BaseExpression | None) -> str | None:
    """The attribute `self.device == "cuda"` tests, if `test` is that comparison."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    if not (isinstance(target.operator, cst.Equal) and isinstance(test.left, cst.Attribute)):
        return None
    if not (isinstance(test.left.value, cst.Name) and arguments.names_a_gpu(target.comparator)):
        return None
    return test.left.attr.value


def _moved_to_gpu_defaults(data: Collected, function: cst.FunctionDef, params: set[str]) -> set[str]:
    """Parameters with a GPU default (`device="cuda"`) that the function's own body moves
    tensors or modules to without a test around the move (GroundingDINO's `predict(model,
    image, caption, device="cuda")`, rome's `make_inputs(tok, prompts, device="cuda")`): a
    call that leaves the default asks for a GPU, and devfix rewrites neither."""
    found = set()
    for call in data.within(data.calls, function):
        for target in _device_targets(call):
            if isinstance(target, cst.Name) and target.value in params and _always_runs(data, call, function):
                found.add(target.value)
    for assign in data.within(data.assigns, function):
        # `iterator_kwargs = {..., "device": device}`, handed on as `**iterator_kwargs` to the
        # loaders (pt.seq2seq's `get_data(..., device='cuda')` and its torchtext iterators)
        if isinstance(assign.value, cst.Dict) and _always_runs(data, assign, function):
            for element in assign.value.elements:
                key = element.key if isinstance(element, cst.DictElement) else None
                value = element.value
                if (
                    isinstance(key, cst.SimpleString)
                    and key.evaluated_value == "device"
                    and isinstance(value, cst.Name)
                    and value.value in params
                ):
                    found.add(value.value)
    return found


_CONDITIONAL = (cst.If, cst.IfExp, cst.While, cst.Try, cst.BooleanOperation, cst.FunctionDef, cst.Lambda, cst.CompFor)


def _always_runs(data: Collected, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """`node` runs whenever `function` does: no branch, loop test, `try` or nested scope
    between them (a `for` loop's body counts as run)."""
    child, parent = node, data.parent.get(id(node))
    while parent is not None and parent is not function:
        if isinstance(parent, _CONDITIONAL) and child is not getattr(parent, "test", None):
            return False
        child, parent = parent, data.parent.get(id(parent))
    return parent is function


def _device_targets(call: cst.Call) -> list[cst.BaseExpression]:
    """Where a call puts tensors: `.to(target)`'s or `.type(target)`'s first argument, any
    `device=target`; a tensor type called (`self.Tensor(input.size())`) builds where it names."""
    found = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "device"]
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("to", "type") and call.args:
        if call.args[0].keyword is None:
            found.append(call.args[0].value)
    if isinstance(func, cst.Name) or (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        found.append(func)
    return found


def _cuda_calls(data: Collected, owner: cst.CSTNode) -> list[cst.Call]:
    return [call for call in data.within(data.calls, owner) if is_cuda_call(call)]


def _kept_switches(data: Collected, init: cst.FunctionDef, klass: cst.ClassDef, params: set[str]) -> set[str]:
    """A constructor's parameters kept as a switch (`self.cuda = cuda`) that another method
    tests around its `.cuda()` (`if self.cuda: story = story.cuda()`, a hand-written batch
    iterator's): building the object with the default asks for a GPU."""
    kept = {attr: param for attr, param in kept_parameters(init).items() if param in params}
    if not kept:
        return set()
    found = set()
    for call in _cuda_calls(data, klass):
        test = _guarding_test(data, call, klass)
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.attr.value in kept:
            found.add(kept[test.attr.value])
    return found


def _moves_in(data: Collected, block: cst.CSTNode | None, calls: Sequence[cst.Call]) -> bool:
    """One of `calls` is inside `block`."""
    if block is None:
        return False
    for call in calls:
        node: cst.CSTNode | None = call
        while node is not None and node is not block:
            node = data.parent.get(id(node))
        if node is block:
            return True
    return False


def _guarding_test(data: Collected, node: cst.CSTNode, owner: cst.CSTNode) -> cst.BaseExpression | None:
    """The test of the nearest `if` whose body holds `node`, inside `owner`: in the function's
    own scope, or (`owner` a class) in any of its methods and their nested functions."""
    branch = _guarding_if(data, node, owner)
    return branch.test if branch is not None else None


def _guarding_if(data: Collected, node: cst.CSTNode, owner: cst.CSTNode) -> cst.If | None:
    """The nearest `if` whose body holds `node`, inside `owner` (see `_guarding_test`)."""
    guard: cst.If | None = None
    decided = False
    child = node
    parent = data.parent.get(id(node))
    while parent is not None and parent is not owner:
        if isinstance(parent, (cst.Lambda, cst.ClassDef)) or (
            isinstance(parent, cst.FunctionDef) and not isinstance(owner, cst.ClassDef)
        ):
            return None
        if isinstance(parent, cst.If) and decided and child is parent.orelse:
            return None  # an `elif cuda:` runs only when the branches before it do not
        if isinstance(parent, cst.If) and child is not parent.test and not decided:
            decided = True  # the `else` side, or a condition that is more than the flag: no guard
            if child is parent.body:
                guard = parent
        child, parent = parent, data.parent.get(id(parent))
    return guard if parent is owner else None


Args = Sequence[tuple[cst.Arg, object]]


def _current_cuda_device(node: cst.BaseExpression) -> bool:
    """`"cuda"` with no index: the current GPU, as `.cuda()` is; DEV002 rewrites it where it is
    passed (`interp_sheet(..., device='cuda')`), it is no choice of a GPU."""
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cuda"


def compared_with_the_cpu(values: dict[int, Value], calls: Iterable[cst.Call], call: cst.Call) -> bool:
    """`profile(rnn, x, y, 'cuda')` beside `profile(rnn, x, y, 'cpu')` (sru's CPU/GPU comparison): a
    call of the same function passes the CPU where this one passes CUDA, so its GPU is meant."""
    callee = values.get(id(call.func))
    ref = callee.ref if callee is not None else None
    if ref is None:
        return False
    for other in calls:
        value = values.get(id(other.func)) if other is not call else None
        if value is not None and value.ref is ref and any(_names_the_cpu(arg.value) for arg in other.args):
            return True
    return False


def _names_the_cpu(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "cpu"


def asks_for_gpu(
    args: Args,
    params: Sequence[str],
    device_params: frozenset[str],
    cuda_switches: frozenset[tuple[str, bool]],
    *,
    rewritten_here: bool = False,
) -> bool:
    """The call passes a GPU index to a parameter the callee moves tensors to, sets to `True` a
    parameter that switches the callee's `.cuda()` on (PairNorm's `load_data(..., cuda=True)`),
    or leaves one whose default does. With
    `rewritten_here` (the calling file is one devfix fixes: it imports torch, and the callee is
    a function), a plain `device="cuda"` is no demand: DEV002 rewrites it with the file's other
    hard-coded CUDA."""

    def rewritten(arg: cst.Arg, name: str | None) -> bool:
        # `device="cuda"`, or a plain "cuda" by position to a parameter the callee moves to
        by_name = arg.keyword is not None and arg.keyword.value == "device"
        by_position = arg.keyword is None and name in device_params
        return rewritten_here and (by_name or by_position) and _current_cuda_device(arg.value)

    for index, (arg, _) in enumerate(args):
        name = arguments.parameter_name(arg, index, params)
        if name in device_params and arguments.names_a_gpu(arg.value) and not rewritten(arg, name):
            return True
    if not cuda_switches or any(arg.star for arg, _ in args):
        return False  # `*args` / `**kwargs` may pass anything
    # the parameters the call fills, each with whether it turns the switch on: `True`, or a GPU
    # named as a string (`FGSM(model, device="cuda")`; `cuda=0` is off)
    passed = {
        name: (isinstance(arg.value, cst.Name) and arg.value.value == "True")
        or (isinstance(arg.value, cst.SimpleString) and arguments.names_a_gpu(arg.value) and not rewritten(arg, name))
        for index, (arg, _) in enumerate(args)
        for name in (arguments.parameter_name(arg, index, params),)
    }
    # `not force_cpu`: asked where the flag is left, or passed a plain `False`
    cleared = {
        name
        for index, (arg, _) in enumerate(args)
        for name in (arguments.parameter_name(arg, index, params),)
        if isinstance(arg.value, cst.Name) and arg.value.value == "False"
    }
    return any(
        (name[4:] not in passed or name[4:] in cleared)
        if name.startswith("not ")
        else (name not in passed and on) or passed.get(name, False)
        for name, on in cuda_switches
    )


# -- GPUs chosen by index ------------------------------------------------------------------------
def cuda_move(values: dict[int, Value], call: cst.Call) -> bool:
    """`x.cuda()` on a value, not a call of `torch.cuda` itself."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
        return False
    receiver = values.get(id(func.value))
    return receiver is None or receiver.qual is None


def chosen_cuda_index(values: dict[int, Value], call: cst.Call) -> bool:
    """`x.cuda(args.gpu)`, `x.cuda(device=rank)`, `torch.cuda.set_device(local_rank)`: a device index
    chosen by the program, one GPU per process; `x.cuda(1)`, the second GPU (DEV002 keeps both)."""
    func = call.func
    callee = values.get(id(func))
    if callee is not None and callee.qual == "torch.cuda.set_device":
        return bool(call.args) and call.args[0].keyword is None and not isinstance(call.args[0].value, cst.Integer)
    return (cuda_move(values, call) and chosen_gpu(cuda_index(call))) or _moved_to_a_rank(values, call)


def _moved_to_a_rank(values: dict[int, Value], call: cst.Call) -> bool:
    """`model.to(args.local_rank)`, `x.to(rank)`: a process's GPU by its index (muzic's
    getmusic `Solver`), which no CPU-only machine has and DEV002 keeps. Not
    `window.to(x.get_device())` (VocGAN's STFT loss), -1 for a CPU tensor: DEV002 makes it
    `window.to(x.device)`, which works on either kind of machine."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "to" and call.args):
        return False
    target = call.args[0]
    if target.keyword is not None:
        return False
    name = dotted_name(target.value)
    value = values.get(id(target.value))
    return (
        name is not None
        and GPU_INDEX_NAME.match(name.rsplit(".", 1)[-1]) is not None
        and (value is None or value.kind not in (Kind.DEVICE, Kind.TENSOR, Kind.MODULE))
    )


def gpu_measurements(
    values: dict[int, Value], calls: Sequence[cst.Call], owner: Callable[[cst.CSTNode], cst.CSTNode]
) -> list[cst.Call]:
    """The readouts of GPU memory (`torch.cuda.max_memory_allocated()`) of a scope (`owner`:
    its function, or the module) that also waits for the GPU or resets its peak counter
    (`torch.cuda.synchronize()`): a speed and memory benchmark of the GPU (lingua's
    `test_gradient_and_speed`, openseg's self-tests that print "Average GPU Memory"), whose
    numbers mean nothing without one. A readout alone is a log line (RepLKNet's `main` prints
    `torch.cuda.memory_allocated()` as it loads), which runs on a CPU and gives 0; and a
    profiler that asks whether there is a GPU (pytorch-GAT's, which prints "GPU not available")
    is written for both kinds of machine."""
    readouts: dict[int, list[cst.Call]] = {}
    measuring: set[int] = set()
    checking: set[int] = set()
    for call in calls:
        callee = values.get(id(call.func))
        qual = callee.qual if callee is not None else None
        if qual in GPU_MEMORY_READOUTS:
            readouts.setdefault(id(owner(call)), []).append(call)
        elif qual in GPU_MEASURING:
            measuring.add(id(owner(call)))
        elif qual in AVAILABILITY_CHECKS:
            checking.add(id(owner(call)))
    return [call for key, found in readouts.items() if key in measuring - checking for call in found]
