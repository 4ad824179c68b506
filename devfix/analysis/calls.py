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

from devfix.analysis import arguments, operations, torch_calls
from devfix.analysis import torch_api as api
from devfix.analysis.linking import exported
from devfix.analysis.operations import attribute, iterate, string_of, struct
from devfix.analysis.scopes import dotted_name
from devfix.analysis.tree import class_constants, cuda_only_names
from devfix.analysis.values import (
    GPU_COUNT,
    GPU_IDS,
    GPU_SKIP,
    HOST,
    UNKNOWN,
    Kind,
    Origin,
    Place,
    Value,
    availability,
    condition,
    derived,
    gpu_count,
    gpu_ids,
    join,
    members,
)

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.classinfo import ClassInfo
    from devfix.analysis.evaluate import Frame
    from devfix.analysis.state import FlowState

Args = list[tuple[cst.Arg, Value]]


# -- calls -----------------------------------------------------------------------------------------------
def call(frame: Frame, node: cst.Call) -> Value:
    func = node.func
    program = frame.program
    if _asks_for_a_gpu_accelerator(node):
        # Lightning's `Trainer(accelerator="gpu")`, co-tracker's `Lite(..., accelerator="gpu")`:
        # without a GPU the framework refuses to start, so what runs under it is GPU code
        program.gpu_only_calls.append(node)
    if isinstance(func, cst.Attribute):
        if func.attr.value == "__init__" and _calls_super(func.value) and frame.klass is not None:
            program.note_parent_init(node, frame.klass)
        receiver = frame.expr(func.value)
        if receiver.qual is not None:
            callee = attribute(frame, func, receiver)
            program.values[id(func)] = callee
            if callee.ref is not None:  # `utils.train(...)`: a project file's function or class
                _note_vendored_gpu_package(program, node, [callee.qual or receiver.qual])
                return program.call_local(frame, node, callee, arguments.evaluated(frame, node))
            return _qualified(frame, node, callee, arguments.evaluated(frame, node))
        args = arguments.evaluated(frame, node)
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
            if member.kind is Kind.OTHER and member.cls is not None and program.defines_method(member, "__call__"):
                return program.call_method(frame, node, member, "__call__", args)  # `self.box_transform(box)`
            cls = _local_class(program, receiver)
            if cls is not None and cls.method(func.attr.value) is None:
                # an attribute the class sets, of a kind not followed (or not settled yet in the
                # first pass): whatever it holds is called, not the instance itself. A module's
                # is taken for one of its layers (`self.spec(x, lengths)`), of a class unknown,
                # unless the class sets its attributes at run time (another framework's objects)
                if receiver.kind is Kind.MODULE and member.kind is not Kind.HOST and not cls.sets_attributes_wholesale:
                    return module_call(frame, node, Value(Kind.MODULE, receiver.place, receiver.origins), args)
                arguments.escape_all(frame, args)
                return UNKNOWN
        else:
            program.values[id(func)] = UNKNOWN
        return method(frame, node, receiver, func.attr.value, args)
    if isinstance(func, cst.Subscript) and _triton_kernel(frame, func.value):
        program.gpu_only_calls.append(node)  # `kernel[grid](x, out, n)`: Triton runs it on a GPU only
    callee = frame.expr(func)
    args = arguments.evaluated(frame, node)
    if isinstance(func, cst.Name) and frame.scope.lookup(func.value) is program.data.module_scope.bindings.get(
        func.value
    ):
        if func.value in cuda_only_names(program.data):
            program.gpu_only_calls.append(node)  # `nms_gpu(dets)`, imported only where CUDA is: NameError without
    if callee.qual is not None or callee.kind is Kind.DEVICE:
        return _qualified(frame, node, callee, args)
    if callee.ref is not None:
        quals = program.imported_as(func.value, frame.scope) if isinstance(func, cst.Name) else []
        _note_vendored_gpu_package(program, node, quals)
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
    arguments.escape_all(frame, args)
    return UNKNOWN


def _qualified(frame: Frame, node: cst.Call, callee: Value, args: Args) -> Value:
    """Calls of imported names, resolved: `torch.zeros`, `nn.Linear`, `DataLoader`, `np.mean`."""
    program = frame.program
    qual = callee.qual or ""
    if callee.kind is Kind.DEVICE:
        # `torch.cuda.FloatTensor(...)`, `Tensor(...)` with `Tensor = torch.cuda.FloatTensor if cuda else ...`
        if arguments.keyword(args, "device") is not None:
            # `torch.FloatTensor(size, device=x.device)`: the author placed it (a legacy constructor
            # refuses a CUDA device, which no `.to()` after it can mend)
            return Value(Kind.TENSOR, Place.UNKNOWN)
        if qual == "torch.Tensor" and program.default_device_changed:
            # after `torch.set_default_tensor_type('torch.cuda.FloatTensor')`, `torch.Tensor(...)`
            # is made on the GPU where there is one (S3FD's demo); `torch.FloatTensor` stays CPU
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
        return torch_calls.torch_function(frame, node, function, args)
    functional = api.functional_name(qual)
    if functional is not None:
        return torch_calls.functional(frame, node, functional, args)
    layer = api.nn_class(qual) or ("CTCLoss" if qual in api.OTHER_CTC_LOSSES else None)
    if layer is not None:
        return program.construct_layer(frame, node, qual, layer, args)
    if api.other_loss_class(qual) is not None and not any(arg.star or v.kind is Kind.TENSOR for arg, v in args):
        return program.construct(frame, node, neutral=True)  # `DiceCELoss(softmax=True)`: no tensor of its own
    if qual == "torch.nn.Parameter" or qual == "torch.nn.parameter.Parameter":
        value = args[0][1] if args else UNKNOWN
        # `nn.Parameter(t, requires_grad=False)` (running statistics kept as parameters)
        frozen = arguments.keyword(args, "requires_grad")
        grad = not (frozen is not None and isinstance(frozen[0].value, cst.Name) and frozen[0].value.value == "False")
        # a frozen parameter is still registered where it is assigned: `member` says so
        return replace(value, grad=grad, member=not grad) if value.kind is Kind.TENSOR else UNKNOWN
    if qual in api.PARAMETER_CONTAINERS:
        # `nn.ParameterList([nn.Parameter(t, requires_grad=False) for ...])`: a module whose
        # parameters, frozen or not, are registered and move with their owner
        arguments.escape_all(frame, args)
        return Value(Kind.MODULE, Place.CPU)
    if qual in api.WRAPPERS:
        return program.wrap(frame, node, qual, args)
    if qual in api.PLACING_WRAPPERS:
        arguments.escape_all(frame, args)
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
    if qual in api.DATASET_SUBSETS or qual in api.DATASET_SPLITS:
        split = _split_dataset(args, whole=qual in api.DATASET_SUBSETS)
        if split is not None:
            return split
    if _loads_onto_a_gpu(args):
        program.gpu_only_calls.append(node)  # `from_pretrained(..., load_in_8bit=True)`: bitsandbytes, on a GPU
    if api.is_model_factory(qual):
        return program.construct(frame, node, neutral=False, place=arguments.device_keyword(args))
    if api.is_optimizer(qual):
        return program.optimizer(frame, node, qual, args)
    if qual in api.ITERATION_WRAPPERS and args and not args[0][0].keyword:
        return args[0][1]  # `tqdm(loader)`: yields what the loader yields
    if qual in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
        return args[0][1] if args else UNKNOWN
    if qual in api.SKIP_DECORATORS and args and _skips_on_a_cpu(qual, args[0][1]):
        # `skipifnocuda = pytest.mark.skipif(not torch.cuda.is_available(), ...)`, a test
        # decorator kept in a name (opacus' benchmark helpers) and read by other files
        return Value(Kind.OTHER, Place.UNKNOWN, flag=GPU_SKIP)
    if qual in api.OTHER_AVAILABILITY_CHECKS:
        return availability()  # `if not tf.test.is_built_with_cuda(): return` before a GPU test
    if qual.startswith(("torch.cuda.", "torch.backends.", "torch.accelerator.")):
        return torch_calls.cuda_query(frame, node, qual, args)
    if api.is_collective(qual):
        frame.program.gpu_only_calls.append(node)  # NCCL hands over CUDA tensors: GPU code by design
        return HOST
    root = qual.split(".")[0]
    if (
        root in api.GPU_ONLY_CALLS
        or root in program.cuda_extensions
        or qual in api.GPU_ONLY_FUNCTIONS | api.CUDA_COMMUNICATION
    ):
        program.gpu_only_calls.append(node)  # a kernel of a CUDA extension, TensorRT, CuPy: GPU code by design
    elif qual in api.GPU_BY_DEFAULT and arguments.keyword(args, "device") is None:
        program.gpu_only_calls.append(node)  # `AutoAttack(model, eps=8 / 255)`: `device="cuda"` by default
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
        return torch_calls.other_torch(frame, node, qual, args)
    arguments.escape_all(frame, args)
    return UNKNOWN


def _builtin(frame: Frame, node: cst.Call, name: str, args: Args) -> Value:
    values = [v for _, v in args]
    gpu_ids = _gpu_ids(name, values)
    if gpu_ids is not None:
        return gpu_ids
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
        arguments.escape_all(frame, args)
        return UNKNOWN
    if name in ("dict",):
        return struct()
    return UNKNOWN


def _gpu_ids(name: str, values: list[Value]) -> Value | None:
    """`list(range(torch.cuda.device_count()))`: the GPUs' ids, an empty list (false) without a
    GPU, whose `[0]` fails there; `len()` of it counts the GPUs again (operations.GPU_IDS)."""
    if len(values) != 1:
        return None
    if name == "range" and values[0].text == GPU_COUNT:
        return gpu_ids()
    if name in ("list", "tuple", "sorted") and values[0].text == GPU_IDS:
        return gpu_ids()
    if name == "len" and values[0].text == GPU_IDS:
        return gpu_count()
    return None


def _skips_on_a_cpu(qual: str, test: Value) -> bool:
    """`skipif(test)` skips where `test` holds, `skipUnless(test)` where it does not: on a CPU-only machine."""
    return test.cpu is (qual.rsplit(".", 1)[-1] != "skipUnless")


def _note_vendored_gpu_package(program: FlowState, node: cst.Call, quals: Sequence[str | None]) -> None:
    """A call into a project's own copy of a GPU-only package (TorchSemiSeg's `furnace/apex`,
    imported as `apex`; `quals`: what the callee is imported as): the copy is that package
    still, and GPU code by design."""
    if any(qual is not None and qual.split(".")[0] in api.GPU_ONLY_CALLS for qual in quals):
        program.gpu_only_calls.append(node)


def _triton_kernel(frame: Frame, node: cst.BaseExpression) -> bool:
    """`node` names a function of the file decorated with `@triton.jit` (or Triton's
    `autotune`/`heuristics` over it): a kernel, launched as `kernel[grid](...)` on a GPU."""
    if not isinstance(node, cst.Name):
        return False
    for binding in frame.scope.lookup(node.value) or ():
        if binding.kind == "def" and isinstance(binding.node, cst.FunctionDef):
            for decorator in binding.node.decorators:
                expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                name = dotted_name(expr)
                if name is not None and "." in name:
                    root, rest = name.split(".", 1)
                    if any(
                        f"{q}.{rest}" in api.TRITON_DECORATORS for q in frame.program.imported_as(root, frame.scope)
                    ):
                        return True
    return False


def _calls_super(node: cst.BaseExpression) -> bool:
    """`super()` or `super(Cls, self)`."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


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
    if name in ("startswith", "__contains__") and receiver.kind in (Kind.DEVICE, Kind.HOST) and len(args) == 1:
        # `str(self.device).__contains__('cuda')` (DBNet's predictor) tests the device as `in` does
        return operations.prefix_test(receiver, string_of(args[0][0].value))
    if receiver.kind is Kind.HOST:
        return HOST
    if receiver.kind is Kind.OPTIMIZER:
        if name == "load_state_dict" and receiver.bound is not None and receiver.bound.kind is Kind.MODULE:
            # loaded state is cast to where the parameters are now (DEV003)
            frame.program.optimizer_loads.append((node, frame.place_of(receiver.bound)))
        return HOST
    arguments.escape_all(frame, args)
    return UNKNOWN


def move(frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> tuple[Place, Origin | None]:
    """Where `.to(...)` / `.cuda()` / `.cpu()` puts its receiver (NONE: it does not move it)."""
    guarded = frame.choice_guard > 0
    if id(node) in frame.program.assume_unmoved:
        return Place.NONE, None
    if name == "cpu":
        return Place.CPU, None
    if name == "cuda":
        positional = arguments.positional(args)
        if (
            positional
            and not isinstance(positional[0][0].value, cst.Integer)
            and positional[0][1].kind is not Kind.DEVICE
        ):
            return Place.DEVICE, Origin("move", node, note="cuda-index", guarded=guarded)
        return Place.DEVICE, Origin("move", node, note="hard", guarded=guarded)
    if name == "type":
        return _type_move(frame, node, args)
    found = arguments.keyword(args, "device")
    positional = arguments.positional(args)
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
        place = arguments.target_place(value, node)
        return place, (
            Origin("move", node, note=arguments.device_flag(value, node), guarded=guarded)
            if place is Place.DEVICE
            else None
        )
    arg, value = target
    if value.kind is Kind.TENSOR:
        return value.place, next(iter(value.origins), None) if value.place is Place.DEVICE else None
    if value.qual is not None and api.is_dtype(value.qual):
        return Place.NONE, None
    place = arguments.target_place(value, arg.value)
    if place is Place.DEVICE:
        return place, Origin(
            "move", node, device=arg.value, note=arguments.device_flag(value, arg.value), guarded=guarded
        )
    return place, None


def _type_move(frame: Frame, node: cst.Call, args: Args) -> tuple[Place, Origin | None]:
    """`x.type(Tensor)` with `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`."""
    positional = arguments.positional(args)
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
    if name in torch_calls.PAIRED_REDUCTIONS and (args or name in ("topk", "sort", "kthvalue")):
        return torch_calls.pairs(
            replace(receiver, grad=receiver.grad and not frame.no_grad, member=False, scalar=False)
        )
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


def _forward_needs_gpu(program: FlowState, module: Value) -> bool:
    """The module is of another file's class whose `forward` asks for a GPU whatever it is
    given (`assert isinstance(x, torch.cuda.FloatTensor)`, `torch.cuda.comm.broadcast`): its
    summary says so. A class of this file needs nothing here: its `forward` is a function the
    call reaches (reach.py)."""
    cls = program.classes.get(id(module.cls)) if module.cls is not None else None
    forward = cls.linked_method("forward") if cls is not None else None
    return forward is not None and forward.needs_gpu


def module_call(frame: Frame, node: cst.Call, module: Value, args: Args) -> Value:
    """`model(x)`: the tensors given to a module meet its weights; the output lives with it."""
    program = frame.program
    if module.obj is not None and any(member in program.ctc_losses for member in members(module.obj)):
        args = torch_calls.log_probs_only(args)
    tensors = _call_tensors(frame, args)
    if module.dp:
        if module.place is Place.CPU:
            program.meet(node, "call", [], module=module, detail="DataParallel")
        place = Place.DEVICE if module.place is not Place.UNKNOWN else Place.UNKNOWN
        origins = frozenset({Origin("move", node, note="dataparallel")}) if place is Place.DEVICE else frozenset()
        return Value(Kind.TENSOR, place, origins, grad=not frame.no_grad)
    requires = program.host_parameters(module, args)
    program.note_linked_forward(module, args)
    if _forward_needs_gpu(program, module):
        program.gpu_only_calls.append(node)  # `self.adain(x)` whose `forward` asserts a CUDA tensor
    lengths = _lengths(args)
    operands = [(n, v) for n, v in tensors if id(n) not in requires and id(n) not in lengths]
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
    return _shaped_like_forward(program, module, out, node)


def _local_class(program: FlowState, instance: Value) -> ClassInfo | None:
    """The class of this file (or linked to it) that `instance` is an instance of."""
    return program.classes.get(id(instance.cls)) if instance.cls is not None else None


def _loads_onto_a_gpu(args: Args) -> bool:
    """`from_pretrained(..., load_in_8bit=True)`: bitsandbytes' 8-bit or 4-bit weights, which only
    a GPU holds (minimal-llama's and alpaca-lora's fine-tuning scripts); `device_map="cuda"`
    (`0`, `"cuda:0"`), weights put on a GPU as they load, which devfix does not rewrite;
    `attn_implementation="flash_attention_2"` (or its older spellings), CUDA kernels (llm.c's
    `export_hf.py`, smollm's synthetic-data scripts)."""
    for name in api.QUANTIZED_LOADS:
        given = arguments.keyword(args, name)
        if given is not None and isinstance(given[0].value, cst.Name) and given[0].value.value == "True":
            return True
    device_map = arguments.keyword(args, "device_map")
    if device_map is not None and arguments.names_a_gpu(device_map[0].value):
        return True
    attention = arguments.keyword(args, "attn_implementation") or arguments.keyword(args, "_attn_implementation")
    return attention is not None and string_of(attention[0].value) == "flash_attention_2"


def _shaped_like_forward(program: FlowState, module: Value, out: Value, node: cst.Call) -> Value:
    """A module of a project class whose `forward` returns a tuple gives that tuple: what is
    surely a host value stays one (`return score, tag_seq`, where `tag_seq` is a Python list of
    decoded tags); the rest lives with the module, as a module's output does. Tuples of several
    lengths: the one the call is unpacked into (`h, loss, _, t_vec = model(...)`). Else: `out`."""
    cls = _local_class(program, module)
    if cls is None:
        return out
    forward = cls.method("forward")
    if forward is not None:
        info = program.functions.get(id(forward))
        returns = info.returns if info is not None else None
        tuples = tuple(info.tuples_returned.items()) if info is not None else ()
    else:
        linked = cls.linked_method("forward")
        returns = linked.returns if linked is not None else None
        tuples = linked.tuples if linked is not None else ()
    if returns is not None and returns.kind is Kind.TENSOR and _moved_to_the_cpu(returns):
        return returns  # `return out.to(torch.device("cpu"))`: a value network hands back CPU tensors
    if returns is not None and returns.kind is Kind.STRUCT and not returns.items and len(tuples) > 1:
        returns = dict(tuples).get(_unpacked_into(program, node) or -1, returns)
    if returns is None or returns.kind is not Kind.STRUCT or not returns.items:
        return out
    items = tuple(_forward_item(item, out) for item in returns.items)
    return Value(Kind.STRUCT, out.place, out.origins, items=items)


def _unpacked_into(program: FlowState, node: cst.Call) -> int | None:
    """How many names `a, b, c = model(x)` unpacks the call's result into."""
    parent = program.data.parent.get(id(node))
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Tuple):
        elements = parent.targets[0].target.elements
        return None if any(isinstance(e, cst.StarredElement) for e in elements) else len(elements)
    return None


def _moved_to_the_cpu(value: Value) -> bool:
    """Placed on the CPU by `.cpu()` or `.to("cpu")` on purpose, wherever it was computed."""
    return value.place is Place.CPU and bool(value.origins) and all(o.kind in ("cpu", "move") for o in value.origins)


def _forward_item(item: Value, out: Value) -> Value:
    """One item of a module's output tuple: a host value or a container of no known tensor
    (a list of decoded tags) stays what it is; a tensor, or what is not known, lives with the
    module as its output does; a tensor moved to the CPU on purpose stays there (DIEN's
    `behavior_length = (...).sum(dim=1).cpu()`, lengths for `pack_padded_sequence`)."""
    if item.kind is Kind.HOST or (item.kind is Kind.TENSOR and _moved_to_the_cpu(item)):
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


def _cuda_type_in(value: Value) -> bool:
    """`torch.cuda.FloatTensor`, or a tuple holding one."""
    if value.kind is Kind.DEVICE:
        return value.tensor_type and value.place is Place.DEVICE
    return any(_cuda_type_in(item) for item in value.items or ())


def _lengths(args: Args) -> set[int]:
    """The sequence lengths handed to a model (`model(inputs, input_lengths)`,
    `encoder(src, lengths=src_lens)`): kept on the CPU by design, since `pack_padded_sequence`
    takes its lengths only there and CTC losses take them there too (every such finding in
    the evaluation was a false positive: kospeech's tests, NCRF++'s char lengths)."""
    found = set()
    for arg, _ in args:
        if isinstance(arg.value, cst.Name):
            name = arg.keyword.value if arg.keyword is not None else arg.value.value
            if api.LENGTHS_NAME.match(name):
                found.add(id(arg.value))
        elif arguments.made_of_sizes(arg.value):
            found.add(id(arg.value))  # `encoder(embedded, torch.LongTensor([text.size(1)]))` (Tacotron's inference)
    return found


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
        name = arguments.parameter_name(arg, index, params)
        if name is None:
            return None
        found[name] = exported(_with_class_constants(value))
    return found


def _split_dataset(args: Args, *, whole: bool) -> Value | None:
    """`Subset(dataset, idx)` is the dataset, `random_split(dataset, lengths)` a list of it: a
    `TensorDataset` of tensors moved to the GPU stays one, and its loaders yield device batches
    (never pinned). None for a dataset the flow does not know: its loaders read as before."""
    found = arguments.keyword(args, "dataset") or (
        arguments.positional(args)[0] if arguments.positional(args) else None
    )
    if found is None:
        return None
    dataset = found[1]
    if dataset.kind is not Kind.DATASET or (dataset.place is Place.UNKNOWN and dataset.element is None):
        return None
    return dataset if whole else Value(Kind.STRUCT, dataset.place, element=dataset)


def _with_class_constants(value: Value) -> Value:
    """A module instance with the literals its class body binds as known attributes: the file
    it is handed to reads `detector.input_size` as a plain tuple, not as one of its tensors."""
    if value.kind is not Kind.MODULE or value.cls is None:
        return value
    return replace(value, attrs=tuple((name, HOST) for name in class_constants(value.cls)))


def _asks_for_a_gpu_accelerator(node: cst.Call) -> bool:
    """The call names the GPU as its accelerator in a literal: `accelerator="gpu"` or "cuda"."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "accelerator":
            text = string_of(arg.value)
            return text is not None and text.lower() in ("gpu", "cuda")
    return False
