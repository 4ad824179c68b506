"""What calls do to places: the semantics of the vocabulary in `torch_api.py` for calls,
applied by the evaluator (`evaluate.Frame`); attributes, subscripts and operators are in
`operations.py`.

Each function takes the frame evaluating the expression, records meetings on the program
(`program.meet`), and returns the `Value` of the expression. A call the analysis cannot see
into returns UNKNOWN, and any module handed to it may have been moved there (`escape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import operations
from devfix.analysis import torch_api as api
from devfix.analysis.linking import exported
from devfix.analysis.operations import attribute, iterate, string_of, struct
from devfix.analysis.values import (
    HOST,
    UNKNOWN,
    Kind,
    Origin,
    Place,
    Value,
    availability,
    condition,
    derived,
    join,
    members,
)

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.classes import ClassInfo
    from devfix.analysis.evaluate import Frame
    from devfix.analysis.state import FlowState

Args = list[tuple[cst.Arg, Value]]


def _args(frame: Frame, call: cst.Call) -> Args:
    return [(arg, frame.expr(arg.value)) for arg in call.args]


def _keyword(args: Args, name: str) -> tuple[cst.Arg, Value] | None:
    for arg, value in args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg, value
    return None


def _positional(args: Args) -> list[tuple[cst.Arg, Value]]:
    return [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]


def _tensors(frame: Frame, args: Args) -> list[tuple[cst.CSTNode, Value]]:
    """Tensor operands among arguments, list/tuple items (`torch.cat([a, b])`) included."""
    found: list[tuple[cst.CSTNode, Value]] = []
    for arg, value in args:
        if value.kind is Kind.TENSOR:
            found.append((arg.value, value))
        elif value.kind is Kind.STRUCT and isinstance(arg.value, (cst.List, cst.Tuple)):
            for element in arg.value.elements:
                item = frame.program.values.get(id(element.value))
                if item is not None and item.kind is Kind.TENSOR:
                    found.append((element.value, item))
        elif value.kind is Kind.STRUCT and value.element is not None and value.element.kind is Kind.TENSOR:
            found.append((arg.value, value.element))
    return found


def _escape_all(frame: Frame, args: Args) -> None:
    for _, value in args:
        frame.escape(value)


def parameter_name(arg: cst.Arg, index: int, params: Sequence[str], *, star_unnamed: bool = False) -> str | None:
    """The parameter an argument fills: its keyword, or the parameter at its position
    (`star_unnamed`: a `*args` in that position fills none)."""
    if arg.keyword is not None:
        return arg.keyword.value
    if index < len(params) and not (star_unnamed and arg.star):
        return params[index]
    return None


# -- calls -----------------------------------------------------------------------------------------------
def call(frame: Frame, node: cst.Call) -> Value:
    func = node.func
    program = frame.program
    if isinstance(func, cst.Attribute):
        receiver = frame.expr(func.value)
        if receiver.qual is not None:
            callee = attribute(frame, func, receiver)
            program.values[id(func)] = callee
            if callee.ref is not None:  # `utils.train(...)`: a project file's function or class
                return program.call_local(frame, node, callee, _args(frame, node))
            return _qualified(frame, node, callee, _args(frame, node))
        args = _args(frame, node)
        if receiver.cls is not None and program.defines(receiver, func.attr.value):
            # `self.model(x)`, `trainer.fit()`: call what the attribute holds
            member = attribute(frame, func, receiver)
            program.values[id(func)] = member
            if member.ref is not None:
                return program.call_local(frame, node, member, args)
            if member.kind is Kind.MODULE:
                return module_call(frame, node, member, args)
            if member.kind is Kind.TENSOR and member.member:
                return module_call(frame, node, Value(Kind.MODULE, member.place, member.origins), args)
            cls = _local_class(program, receiver)
            if cls is not None and cls.method(func.attr.value) is None:
                # an attribute the class sets, of a kind not followed (or not settled yet in the
                # first pass): whatever it holds is called, not the instance itself. A module's
                # is taken for one of its layers (`self.spec(x, lengths)`), of a class unknown,
                # unless the class sets its attributes at run time (another framework's objects)
                if receiver.kind is Kind.MODULE and member.kind is not Kind.HOST and not cls.sets_attributes_wholesale:
                    return module_call(frame, node, Value(Kind.MODULE, receiver.place, receiver.origins), args)
                _escape_all(frame, args)
                return UNKNOWN
        else:
            program.values[id(func)] = UNKNOWN
        return method(frame, node, receiver, func.attr.value, args)
    callee = frame.expr(func)
    args = _args(frame, node)
    if callee.qual is not None or callee.kind is Kind.DEVICE:
        return _qualified(frame, node, callee, args)
    if callee.ref is not None:
        return program.call_local(frame, node, callee, args)
    if callee.kind in (Kind.OTHER, Kind.DATASET) and callee.cls is not None and program.defines(callee, "__call__"):
        return program.call_method(frame, node, callee, "__call__", args)  # `predictor(image)`
    if isinstance(func, cst.Name):
        imported = program.imported_as(func.value, frame.scope)
        if any(q in api.ITERATION_WRAPPERS for q in imported) and args:
            return args[0][1]  # `tqdm` imported with a local fallback: either way, the same items
        host = next((q for q in imported if api.is_host_library(q)), None)
        if host is not None:  # `accuracy_score` from scikit-learn, or a NumPy fallback: host data either way
            tensors = [(a.value, v) for a, v in args if v.kind is Kind.TENSOR]
            if tensors:
                program.meet(node, "host", tensors, detail=host)
            return HOST
    if callee.kind is Kind.MODULE:
        return module_call(frame, node, callee, args)
    if callee.kind is Kind.TENSOR and callee.member:
        return module_call(frame, node, Value(Kind.MODULE, callee.place, callee.origins), args)
    if isinstance(func, cst.Name) and func.value in ("Variable",):
        return args[0][1] if args else UNKNOWN
    _escape_all(frame, args)
    return UNKNOWN


def _qualified(frame: Frame, node: cst.Call, callee: Value, args: Args) -> Value:
    """Calls of imported names, resolved: `torch.zeros`, `nn.Linear`, `DataLoader`, `np.mean`."""
    program = frame.program
    qual = callee.qual or ""
    if callee.kind is Kind.DEVICE:
        # `torch.cuda.FloatTensor(...)`, `Tensor(...)` with `Tensor = torch.cuda.FloatTensor if cuda else ...`
        if _keyword(args, "device") is not None:
            # `torch.FloatTensor(size, device=x.device)`: the author placed it (a legacy constructor
            # refuses a CUDA device, which no `.to()` after it can mend)
            return Value(Kind.TENSOR, Place.UNKNOWN)
        origin = Origin("cuda-type" if callee.place is Place.DEVICE else "host", node)
        return Value(
            Kind.TENSOR, callee.place, frozenset({origin}) if callee.place is not Place.UNKNOWN else frozenset()
        )
    if qual in api.LOADS:
        return program.load(frame, node, args)
    if qual in api.SAVES:
        saved = args[0][1] if args else UNKNOWN
        first = args[0][0].value if args else None
        if (
            isinstance(first, cst.Call)
            and isinstance(first.func, cst.Attribute)
            and first.func.attr.value == "state_dict"
        ):
            saved = program.values.get(id(first.func.value), saved)  # `torch.save(net.state_dict(), f)`: where `net` is
        program.saves.append((node, saved))
        return HOST
    function = api.torch_function(qual)
    if function is not None:
        return _torch_function(frame, node, function, args)
    functional = api.functional_name(qual)
    if functional is not None:
        return _functional(frame, node, functional, args)
    layer = api.nn_class(qual)
    if layer is not None:
        return program.construct_layer(frame, node, qual, layer, args)
    if qual == "torch.nn.Parameter" or qual == "torch.nn.parameter.Parameter":
        value = args[0][1] if args else UNKNOWN
        # `nn.Parameter(t, requires_grad=False)` (running statistics kept as parameters)
        frozen = _keyword(args, "requires_grad")
        grad = not (frozen is not None and isinstance(frozen[0].value, cst.Name) and frozen[0].value.value == "False")
        # a frozen parameter is still registered where it is assigned: `member` says so
        return replace(value, grad=grad, member=not grad) if value.kind is Kind.TENSOR else UNKNOWN
    if qual in api.WRAPPERS:
        return program.wrap(frame, node, qual, args)
    if qual in api.PLACING_WRAPPERS:
        _escape_all(frame, args)
        return Value(Kind.MODULE, Place.UNKNOWN)
    if qual in api.DATALOADERS:
        return program.loader(frame, node, args)
    if qual in api.TENSOR_DATASETS:
        items = tuple(value for arg, value in args if arg.keyword is None and not arg.star)
        program.datasets[id(node)] = (node, args)
        return Value(
            Kind.DATASET,
            derived(Kind.TENSOR, items).place if items else Place.CPU,
            element=struct(items=items),
            obj=id(node),
        )
    if api.is_model_factory(qual):
        return program.construct(frame, node, neutral=False, place=_device_keyword(args))
    if api.is_optimizer(qual):
        return program.optimizer(frame, node, qual, args)
    if qual in api.ITERATION_WRAPPERS and args and not args[0][0].keyword:
        return args[0][1]  # `tqdm(loader)`: yields what the loader yields
    if qual in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
        return args[0][1] if args else UNKNOWN
    if qual.startswith(("torch.cuda.", "torch.backends.", "torch.accelerator.")):
        return _cuda_query(frame, node, qual, args)
    if qual.startswith("torch.distributed.") and qual.rsplit(".", 1)[-1] in api.COLLECTIVES:
        frame.program.gpu_only_calls.append(node)  # NCCL hands over CUDA tensors: GPU code by design
        return HOST
    root = qual.split(".")[0]
    if root in api.GPU_ONLY_CALLS or root in program.cuda_extensions:
        program.gpu_only_calls.append(node)  # a kernel of a CUDA extension, TensorRT, CuPy: GPU code by design
    if qual in ("argparse.ArgumentParser",):
        return Value(Kind.OTHER, Place.UNKNOWN, qual=None, flag="parser")
    if api.is_host_library(qual):
        tensors = [(a.value, v) for a, v in args if v.kind is Kind.TENSOR]
        if tensors:
            program.meet(node, "host", tensors, detail=qual)
        return HOST
    if qual.startswith("builtins."):
        return _builtin(frame, node, qual[9:], args)
    if qual.startswith("torch.") and not api.is_self_placing(qual):
        return _other_torch(frame, node, qual, args)
    _escape_all(frame, args)
    return UNKNOWN


def _device_keyword(args: Args) -> Place:
    found = _keyword(args, "device")
    if found is None:
        return Place.CPU
    return _target_place(found[1], found[0].value)


def _target_place(value: Value, node: cst.CSTNode) -> Place:
    """The place a device argument names: a device value, a string, a tensor's device."""
    if value.kind is Kind.DEVICE:
        return value.place
    if value.kind is Kind.HOST:
        if value.text is not None:
            named = api.device_string_place(value.text)
            return Place.DEVICE if named == "device" else (Place.CPU if named == "cpu" else Place.UNKNOWN)
        if isinstance(node, cst.Integer):
            return Place.DEVICE  # `.cuda(0)`, `.to(0)`
        if isinstance(node, cst.Name) and node.value == "None":
            return Place.NONE
    return Place.UNKNOWN


def _device_flag(value: Value, node: cst.CSTNode) -> str:
    if value.kind is Kind.DEVICE and value.flag:
        return value.flag
    if value.kind is Kind.HOST and value.text is not None:
        return "hard" if api.device_string_place(value.text) == "device" else "constant"
    return "unknown"


def _torch_function(frame: Frame, node: cst.Call, function: str, args: Args) -> Value:
    program = frame.program
    if function in api.FACTORIES or function in api.SCALAR_FACTORIES:
        return _factory(frame, node, function, args)
    if function in api.FROM_HOST:
        data = args[0][1] if args else HOST
        if data.kind is Kind.TENSOR:
            return replace(data, member=False)
        place = _device_keyword(args)
        if place is not Place.CPU:
            return Value(Kind.TENSOR, place)
        origin = Origin("host", node, loop=frame.loops[-1] if frame.loops else None)
        return Value(Kind.TENSOR, Place.CPU, frozenset({origin}))
    if function in api.LIKE_FACTORIES:
        like = args[0][1] if args else UNKNOWN
        device = _keyword(args, "device")
        if device is not None:
            return Value(Kind.TENSOR, _target_place(device[1], device[0].value))
        return replace(like, grad=False, member=False) if like.kind is Kind.TENSOR else UNKNOWN
    if function == "device":
        return _device(frame, node, args)
    if function in ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled"):
        return Value(Kind.OTHER, Place.UNKNOWN, qual=f"torch.{function}")
    if function in ("is_tensor", "numel", "manual_seed", "set_default_dtype", "get_default_dtype", "save"):
        return HOST
    if function == "set_default_tensor_type" or function == "set_default_device":
        program.default_device_changed = True
        if args and _names_cuda(args[0]):
            program.gpu_only_calls.append(node)  # every factory after it asks CUDA: GPU code by design
        return HOST
    return _other_torch(frame, node, f"torch.{function}", args)


def _names_cuda(arg: tuple[cst.Arg, Value]) -> bool:
    """`"torch.cuda.FloatTensor"`, `torch.cuda.FloatTensor`, `"cuda"`, `"cuda:0"`: a default
    tensor type or device only a GPU has (a choice, `... if cuda else ...`, is not)."""
    _, value = arg
    if value.qual in api.CUDA_TENSOR_TYPES:
        return True
    text = value.text  # the string constant, as the flow read it
    return text is not None and (text in api.CUDA_TENSOR_TYPES or text.split(":")[0] == "cuda")


def _factory(frame: Frame, node: cst.Call, function: str, args: Args) -> Value:
    """`torch.zeros(...)`: a new tensor on the CPU unless `device=` says otherwise."""
    if any(arg.star for arg, _ in args):
        return UNKNOWN
    if function == "normal":
        # `torch.normal(mean_tensor, std_tensor)` is made where its tensors are (and takes no
        # `device=`): only the `(mean, std, size)` form of numbers is a factory
        given = [value for arg, value in args if arg.keyword is None or arg.keyword.value in ("mean", "std")][:2]
        if any(value.kind is not Kind.HOST for value in given):
            tensors = [value for value in given if value.kind is Kind.TENSOR]
            return derived(Kind.TENSOR, tensors, grad=False) if len(tensors) == len(given) else UNKNOWN
    device = _keyword(args, "device")
    grad = _keyword(args, "requires_grad") is not None
    if device is not None:
        place = _target_place(device[1], device[0].value)
        origins = (
            frozenset({Origin("move", node, device=device[0].value, note=_device_flag(device[1], device[0].value))})
            if place is Place.DEVICE
            else frozenset()
        )
        return Value(Kind.TENSOR, place, origins, grad=grad)
    out = _keyword(args, "out")
    if out is not None:
        # `torch.arange(0, n, out=torch.cuda.LongTensor(n))`: the result is `out`, where it lives
        return replace(out[1], member=False) if out[1].kind is Kind.TENSOR else UNKNOWN
    if frame.program.default_device_changed:
        return UNKNOWN
    positional = _positional(args)
    if function in api.SCALAR_FACTORIES and positional:
        data = positional[0][1]
        if data.kind is Kind.TENSOR:
            return replace(data, member=False)
        if data.kind is Kind.HOST and not isinstance(positional[0][0].value, (cst.List, cst.Tuple, cst.ListComp)):
            return Value(Kind.TENSOR, Place.CPU, frozenset({Origin("factory", node)}), scalar=True)
    loop = frame.loops[-1] if frame.loops else None
    return Value(Kind.TENSOR, Place.CPU, frozenset({Origin("factory", node, loop=loop)}), grad=grad)


def _device(frame: Frame, node: cst.Call, args: Args) -> Value:
    """`torch.device(...)`: where it points on a GPU machine, and how it was chosen."""
    positional = _positional(args)
    if not positional:
        return Value(Kind.DEVICE, Place.UNKNOWN)
    arg, value = positional[0]
    if value.kind is Kind.DEVICE:
        if value.place is Place.DEVICE and not value.origins:
            return replace(value, origins=frozenset({Origin("move", node, device=node, note=value.flag or "unknown")}))
        return value
    place = _target_place(value, arg.value)
    if place is Place.NONE:
        place = Place.UNKNOWN
    flag = value.flag if value.flag in ("available", "choice") else _device_flag(value, arg.value)
    if len(positional) > 1 and place is Place.UNKNOWN and value.text is not None:
        place = Place.DEVICE if api.device_string_place(value.text) == "device" else place
    origins = frozenset({Origin("move", node, device=node, note=flag)}) if place is Place.DEVICE else frozenset()
    return Value(Kind.DEVICE, place, origins, flag=flag)


def _functional(frame: Frame, node: cst.Call, name: str, args: Args) -> Value:
    """`F.cross_entropy(out, y)`, `F.relu(x)`, `F.embedding(ids, weight)`: tensors meet."""
    if name == "pack_padded_sequence":
        positional = _positional(args)
        lengths = _keyword(args, "lengths") or (positional[1] if len(positional) > 1 else None)
        if lengths is not None and lengths[1].kind is Kind.TENSOR:
            frame.program.meet(
                lengths[0].value, "host", [(lengths[0].value, lengths[1])], detail="pack_padded_sequence lengths"
            )
        data = positional[0][1] if positional else UNKNOWN
        return replace(data, member=False) if data.kind is Kind.TENSOR else UNKNOWN
    if name == "ctc_loss":
        args = _log_probs_only(args)
    tensors = _tensors(
        frame,
        [(a, v) for a, v in args if a.keyword is None or a.keyword.value in ("input", "target", "weight", "other")],
    )
    if name in ("embedding", "one_hot"):
        if len(tensors) >= 2 and name == "embedding":
            frame.program.meet(node, "index", [tensors[1], tensors[0]])
    elif len([t for t in tensors if not t[1].scalar]) >= 2:
        frame.program.meet(node, "op", tensors)
    if not tensors:
        return UNKNOWN
    return derived(Kind.TENSOR, [v for _, v in tensors], grad=None if not frame.no_grad else False, met=True)


PAIRED_REDUCTIONS = frozenset({"max", "min", "median", "mode", "topk", "sort", "kthvalue"})


def _pairs(value: Value) -> Value:
    """`torch.max(x, 1)`, `x.topk(k)`, `x.sort()`: (values, indices) — indices need no grad."""
    if value.kind is not Kind.TENSOR:
        return value
    indices = replace(value, grad=False)
    return Value(Kind.STRUCT, value.place, value.origins, items=(value, indices), element=value)


def _other_torch(frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
    """Any other torch function: its tensor arguments meet; the result lives with them."""
    name = qual.split(".")[-1]
    result = _torch_result(frame, node, qual, name, args)
    along_dim = len(_positional(args)) > 1 or _keyword(args, "dim") is not None
    if name in PAIRED_REDUCTIONS and (along_dim or name in ("topk", "sort", "kthvalue")):
        return _pairs(result)
    return result


def _torch_result(frame: Frame, node: cst.Call, qual: str, name: str, args: Args) -> Value:
    if qual.startswith("torch.nn.utils.rnn.") and name == "pack_padded_sequence":
        return _functional(frame, node, name, args)
    if qual.startswith(("torch.nn.utils.", "torch.nn.init.")) or (
        qual.startswith("torch.utils.") and "data" not in qual
    ):
        return UNKNOWN
    tensors = _tensors(
        frame, [(a, v) for a, v in args if a.keyword is None or a.keyword.value in ("input", "other", "out")]
    )
    if not tensors:
        return UNKNOWN if any(v.kind is not Kind.HOST for _, v in args) else HOST
    if name in api.INDEXING and len(tensors) >= 2:
        frame.program.meet(node, "index", tensors[:2])
    elif (name in api.COMBINING or qual.count(".") == 1) and len([t for t in tensors if not t[1].scalar]) >= 2:
        frame.program.meet(node, "op", tensors)
    grad = None if not frame.no_grad and name not in api.NO_GRAD_RESULTS else False
    scalar = all(v.scalar for _, v in tensors)  # `torch.sqrt(torch.tensor(2.0 / math.pi))` is still 0-dim
    return derived(Kind.TENSOR, [v for _, v in tensors], grad=grad, scalar=scalar, met=True)


def _cuda_query(frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
    """`torch.cuda.is_available()` is true on a GPU machine; other torch.cuda calls are CUDA-only."""
    if qual == "torch.cuda.device_count":
        return replace(availability(), text="#gpus")  # one GPU: see `operations._gpu_count_test`
    if qual in api.AVAILABILITY_CHECKS:
        return availability()
    if qual in api.CUDA_ONLY_VALUES:
        frame.program.gpu_only_calls.append(node)
    return HOST


def _builtin(frame: Frame, node: cst.Call, name: str, args: Args) -> Value:
    values = [v for _, v in args]
    if name in ("enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter", "filter", "map"):
        if name == "enumerate" and values:
            return struct(element=struct(items=(HOST, iterate(frame, values[0], node))))
        if name == "zip":
            return struct(element=struct(items=tuple(iterate(frame, v, node) for v in values)))
        if name == "iter" and values and values[0].kind is Kind.LOADER:
            return values[0]
        if values:
            source = values[0]
            if source.kind is Kind.LOADER:
                return source
            return (
                struct(element=iterate(frame, source, node))
                if source.kind in (Kind.STRUCT, Kind.TENSOR, Kind.MODULE)
                else UNKNOWN
            )
        return struct()
    if name == "next" and values:
        return iterate(frame, values[0], node)  # `x, y = next(it)` over `it = iter(loader)`: a batch
    if name == "str" and len(values) == 1 and values[0].kind is Kind.DEVICE:
        return operations.device_text(values[0])
    if name == "isinstance" and len(values) == 2 and _cuda_type_in(values[1]):
        return condition(None, False, "relative")  # `isinstance(x, torch.cuda.FloatTensor)`: never true without CUDA
    if name in (
        "len",
        "int",
        "float",
        "str",
        "bool",
        "print",
        "isinstance",
        "hasattr",
        "repr",
        "format",
        "range",
        "round",
        "abs",
    ):
        return HOST
    if name in ("sum", "max", "min") and values and values[0].kind is Kind.STRUCT:
        element = values[0].element
        return element if element is not None and element.kind is Kind.TENSOR else HOST
    if name in ("getattr", "setattr", "vars", "globals", "locals", "eval", "exec"):
        _escape_all(frame, args)
        return UNKNOWN
    if name in ("dict",):
        return struct()
    return UNKNOWN


# -- method calls ------------------------------------------------------------------------------------------
def method(frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> Value:
    program = frame.program
    if receiver.kind is Kind.TENSOR:
        if (
            receiver.member
            and name not in api.SAME_PLACE_METHODS
            and name not in api.MOVE_METHODS
            and name not in ("cpu", "numpy", "type")
        ):
            return module_call(frame, node, Value(Kind.MODULE, receiver.place, receiver.origins), args)
        return _tensor_method(frame, node, receiver, name, args)
    if receiver.kind is Kind.MODULE:
        return program.module_method(frame, node, receiver, name, args)
    if receiver.kind is Kind.STRUCT:
        return _struct_method(frame, node, receiver, name, args)
    if receiver.kind is Kind.LOADER:
        if name == "__iter__":
            return receiver
        return UNKNOWN
    if receiver.kind is Kind.OTHER and receiver.flag == "parser":
        return program.parser_method(frame, node, name, args)
    if receiver.kind in (Kind.OTHER, Kind.DATASET) and receiver.cls is not None:
        return program.call_method(frame, node, receiver, name, args)
    if name == "startswith" and receiver.kind in (Kind.DEVICE, Kind.HOST) and len(args) == 1:
        return operations.prefix_test(receiver, string_of(args[0][0].value))
    if receiver.kind is Kind.HOST:
        return HOST
    if receiver.kind is Kind.OPTIMIZER:
        if name == "load_state_dict" and receiver.bound is not None and receiver.bound.kind is Kind.MODULE:
            # loaded state is cast to where the parameters are now (DEV003)
            frame.program.optimizer_loads.append((node, frame.place_of(receiver.bound)))
        return HOST
    _escape_all(frame, args)
    return UNKNOWN


def move(frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> tuple[Place, Origin | None]:
    """Where `.to(...)` / `.cuda()` / `.cpu()` puts its receiver (NONE: it does not move it)."""
    guarded = frame.choice_guard > 0
    if id(node) in frame.program.assume_unmoved:
        return Place.NONE, None
    if name == "cpu":
        return Place.CPU, None
    if name == "cuda":
        positional = _positional(args)
        if (
            positional
            and not isinstance(positional[0][0].value, cst.Integer)
            and positional[0][1].kind is not Kind.DEVICE
        ):
            return Place.DEVICE, Origin("move", node, note="cuda-index", guarded=guarded)
        return Place.DEVICE, Origin("move", node, note="hard", guarded=guarded)
    if name == "type":
        return _type_move(frame, node, args)
    found = _keyword(args, "device")
    positional = _positional(args)
    target = found if found is not None else (positional[0] if positional else None)
    if target is None:
        spread = next((value for arg, value in args if arg.star == "**"), None)
        if spread is None:
            return Place.NONE, None
        # `.to(**self.tpdv)` with `self.tpdv = dict(dtype=..., device=device)`: its `device` key
        # if devfix sees it, else a device it cannot tell
        keyed = dict(spread.keys or ()) if spread.kind is Kind.STRUCT else {}
        if "device" not in keyed:
            return (Place.UNKNOWN if spread.kind is not Kind.STRUCT or spread.keys is None else Place.NONE), None
        value = keyed["device"]
        place = _target_place(value, node)
        return place, (
            Origin("move", node, note=_device_flag(value, node), guarded=guarded) if place is Place.DEVICE else None
        )
    arg, value = target
    if value.kind is Kind.TENSOR:
        return value.place, next(iter(value.origins), None) if value.place is Place.DEVICE else None
    if value.qual is not None and api.is_dtype(value.qual):
        return Place.NONE, None
    place = _target_place(value, arg.value)
    if place is Place.DEVICE:
        return place, Origin("move", node, device=arg.value, note=_device_flag(value, arg.value), guarded=guarded)
    return place, None


def _type_move(frame: Frame, node: cst.Call, args: Args) -> tuple[Place, Origin | None]:
    """`x.type(Tensor)` with `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`."""
    positional = _positional(args)
    if not positional:
        return Place.NONE, None
    _arg, value = positional[0]
    if value.kind is Kind.DEVICE:
        if value.place is Place.DEVICE:
            return Place.DEVICE, Origin(
                "move",
                node,
                device=None,
                note=value.flag or "type",
                guarded=frame.choice_guard > 0 or value.flag == "choice",
            )
        return value.place, None
    if value.kind is Kind.HOST and value.text is not None:
        return (Place.DEVICE if value.text.startswith("torch.cuda.") else Place.CPU), (
            Origin("move", node, note="type") if value.text.startswith("torch.cuda.") else None
        )
    if value.qual is not None and api.is_dtype(value.qual):
        return Place.NONE, None
    return Place.UNKNOWN, None


def _tensor_method(frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> Value:
    program = frame.program
    target = node.func.value if isinstance(node.func, cst.Attribute) else node.func  # `x` of `x.name(...)`
    if name in api.MOVE_METHODS or name in api.HOST_METHODS or name == "type":
        if name == "type" and not args:
            return HOST
        place, origin = move(frame, node, receiver, name, args)
        if place is Place.NONE:
            return replace(receiver, member=False)
        if place is Place.UNKNOWN:
            return Value(Kind.TENSOR, Place.UNKNOWN, grad=receiver.grad)
        origins = (
            frozenset({origin})
            if origin is not None
            else (frozenset({Origin("cpu", node)}) if place is Place.CPU else frozenset())
        )
        program.tensor_moves.append((node, receiver, place))
        # moved, it is no longer the parameter as the callers passed it: `x = x.to(dev)` in a
        # module's method says nothing about where its callers' `x` must be
        return replace(receiver, place=place, origins=origins, member=False, scalar=receiver.scalar, param=None)
    if name == "numpy":
        program.meet(node, "host", [(target, receiver)], detail="numpy")
        return HOST
    if name in api.HOST_VALUE_METHODS:
        return HOST
    if name == "type_as":
        other = args[0][1] if args else UNKNOWN
        return (
            replace(receiver, place=other.place, origins=other.origins, member=False)
            if other.kind is Kind.TENSOR
            else UNKNOWN
        )
    if name == "copy_":
        return receiver
    tensors = [(a.value, v) for a, v in args if v.kind is Kind.TENSOR]
    if name in ("index_select", "gather", "take", "take_along_dim", "masked_select") and tensors:
        program.meet(node, "index", [(target, receiver), tensors[0]])
    elif name in api.COMBINING_METHODS and tensors and not all(v.scalar for _, v in tensors) and not receiver.scalar:
        program.meet(node, "op", [(target, receiver), *[t for t in tensors if not t[1].scalar]])
    if name in PAIRED_REDUCTIONS and (args or name in ("topk", "sort", "kthvalue")):
        return _pairs(replace(receiver, grad=receiver.grad and not frame.no_grad, member=False, scalar=False))
    if name in api.SAME_PLACE_METHODS:
        grad = receiver.grad and name not in api.NO_GRAD_RESULTS and not frame.no_grad
        if name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"):
            return replace(receiver, grad=False, member=False, scalar=False)
        return replace(
            receiver,
            grad=grad,
            member=False,
            scalar=receiver.scalar and name not in ("repeat", "expand", "unsqueeze", "view", "reshape"),
        )
    if name in ("backward", "register_hook", "retain_grad"):
        return HOST
    return UNKNOWN


def _struct_method(frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> Value:
    """Methods of tuples, lists, dicts and batches of unknown shape."""
    program = frame.program
    if name in ("items",):
        program.note_access(receiver, "items")
        return struct(element=struct(items=(HOST, receiver.element or UNKNOWN)))
    if name in ("values",):
        program.note_access(receiver, "items")
        return struct(element=receiver.element or UNKNOWN)
    if name in ("keys",):
        return struct(element=HOST)
    if name in ("get", "pop") and args:
        text = string_of(args[0][0].value)
        program.note_access(receiver, "key" if text is not None else "index")
        for key, value in receiver.keys or ():
            if key == text:
                return value
        return receiver.element or UNKNOWN
    if (
        name in ("append", "extend", "insert", "add")
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
    ):
        added = args[-1][1] if args else UNKNOWN
        if name == "extend":
            added = added.element if added.kind is Kind.STRUCT and added.element is not None else UNKNOWN
        element = join(receiver.element, added) if receiver.element is not None else added
        frame.env[node.func.value.value] = struct(element=element)
        return HOST
    if name in api.MOVE_METHODS:
        place, origin = move(frame, node, receiver, name, args)
        if place is Place.NONE:
            return receiver
        element = Value(Kind.TENSOR, place, frozenset({origin}) if origin else frozenset())
        program.note_access(receiver, "moved")
        return Value(Kind.STRUCT, place, element.origins, element=element)
    return UNKNOWN


def module_call(frame: Frame, node: cst.Call, module: Value, args: Args) -> Value:
    """`model(x)`: the tensors given to a module meet its weights; the output lives with it."""
    program = frame.program
    if module.obj is not None and any(member in program.ctc_losses for member in members(module.obj)):
        args = _log_probs_only(args)
    tensors = _call_tensors(frame, args)
    if module.dp:
        if module.place is Place.CPU:
            program.meet(node, "call", [], module=module, detail="DataParallel")
        place = Place.DEVICE if module.place is not Place.UNKNOWN else Place.UNKNOWN
        origins = frozenset({Origin("move", node, note="dataparallel")}) if place is Place.DEVICE else frozenset()
        return Value(Kind.TENSOR, place, origins, grad=not frame.no_grad)
    requires = program.host_parameters(module, args)
    program.note_linked_forward(module, args)
    operands = [(n, v) for n, v in tensors if id(n) not in requires]
    if operands or not module.neutral:
        program.meet(node, "call", operands, module=module)
    for n, v in tensors:
        if id(n) in requires:
            program.meet(n, "host", [(n, v)], detail="a parameter the model keeps on the CPU")
    if module.neutral:
        return (
            derived(Kind.TENSOR, [v for _, v in tensors], grad=None if not frame.no_grad else False)
            if tensors
            else UNKNOWN
        )
    if module.place is Place.UNKNOWN:
        out = Value(Kind.TENSOR, Place.UNKNOWN, grad=not frame.no_grad)
    else:
        out = Value(Kind.TENSOR, module.place, module.origins, grad=not frame.no_grad)
    return _shaped_like_forward(program, module, out)


def _local_class(program: FlowState, instance: Value) -> ClassInfo | None:
    """The class of this file (or linked to it) that `instance` is an instance of."""
    return program.classes.get(id(instance.cls)) if instance.cls is not None else None


def _shaped_like_forward(program: FlowState, module: Value, out: Value) -> Value:
    """A module of a project class whose `forward` returns a tuple gives that tuple: what is
    surely a host value stays one (`return score, tag_seq`, where `tag_seq` is a Python list of
    decoded tags); the rest lives with the module, as a module's output does. Else: `out`."""
    cls = _local_class(program, module)
    if cls is None:
        return out
    forward = cls.method("forward")
    if forward is not None:
        info = program.functions.get(id(forward))
        returns = info.returns if info is not None else None
    else:
        linked = cls.linked_method("forward")
        returns = linked.returns if linked is not None else None
    if returns is None or returns.kind is not Kind.STRUCT or not returns.items:
        return out
    items = tuple(_forward_item(item, out) for item in returns.items)
    return Value(Kind.STRUCT, out.place, out.origins, items=items)


def _forward_item(item: Value, out: Value) -> Value:
    """One item of a module's output tuple: a host value or a container of no known tensor
    (a list of decoded tags) stays what it is; a tensor, or what is not known, lives with the
    module as its output does."""
    if item.kind is Kind.HOST:
        return item
    if item.kind is Kind.STRUCT and not _holds_tensor(item):
        return item
    return out


def _holds_tensor(value: Value) -> bool:
    if value.kind is Kind.TENSOR:
        return True
    parts = [*(value.items or ()), *(item for _, item in value.keys or ())]
    if value.element is not None and value.element is not value:
        parts.append(value.element)
    return any(_holds_tensor(part) for part in parts)


def names_a_gpu(node: cst.BaseExpression) -> bool:
    """A literal that names an accelerator wherever it is passed as a device: `0`, `"cuda"`, `"cuda:1"`."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return isinstance(text, str) and api.device_string_place(text) == "device"
    return False


def _cuda_type_in(value: Value) -> bool:
    """`torch.cuda.FloatTensor`, or a tuple holding one."""
    if value.kind is Kind.DEVICE:
        return value.tensor_type and value.place is Place.DEVICE
    return any(_cuda_type_in(item) for item in value.items or ())


def _log_probs_only(args: Args) -> Args:
    """The arguments of a CTC loss that must be on the device: its log-probabilities. Its
    targets and lengths may stay on the CPU (cuDNN's CTC even requires CPU lengths)."""
    positional = _positional(args)
    keyword = _keyword(args, "log_probs") or _keyword(args, "input")
    chosen = keyword or (positional[0] if positional else None)
    return [chosen] if chosen is not None else []


def _call_tensors(frame: Frame, args: Args) -> list[tuple[cst.CSTNode, Value]]:
    """Tensor arguments of a module call, `**batch` and `*inputs` included."""
    found: list[tuple[cst.CSTNode, Value]] = []
    for arg, value in args:
        if value.kind is Kind.TENSOR and not value.scalar:
            found.append((arg.value, value))
        elif arg.star == "**" and value.kind is Kind.STRUCT:
            frame.program.note_access(value, "splat")
            for _, item in value.keys or ():
                if item.kind is Kind.TENSOR:
                    found.append((arg.value, item))
            if not value.keys and value.element is not None and value.element.kind is Kind.TENSOR:
                found.append((arg.value, value.element))
        elif arg.star == "" and value.kind is Kind.STRUCT and value.items is not None:
            for item in value.items:  # `self.lstm(x, (h0, c0))`
                if item.kind is Kind.TENSOR and not item.scalar:
                    found.append((arg.value, item))
        elif arg.star == "*" and value.kind is Kind.STRUCT:
            frame.program.note_access(value, "splat")
            for item in value.items or ([value.element] if value.element is not None else []):
                if item.kind is Kind.TENSOR:
                    found.append((arg.value, item))
    return found


def optimizer_params(value: Value) -> Value | None:
    """The module whose parameters an optimizer gets (`model.parameters()`)."""
    if value.kind is Kind.STRUCT and value.bound is not None:
        return value.bound
    return None


def linked_arguments(params: tuple[str, ...], args: Args) -> dict[str, Value] | None:
    """A call's arguments by parameter name, exported for the callee's file (None when a
    `*args`/`**kwargs` makes them unmatchable)."""
    found: dict[str, Value] = {}
    for index, (arg, value) in enumerate(args):
        if arg.star:
            return None
        name = parameter_name(arg, index, params)
        if name is None:
            return None
        found[name] = exported(value)
    return found
