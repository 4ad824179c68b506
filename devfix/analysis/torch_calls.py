"""What torch's own functions do to places: factories (`torch.zeros` on the CPU unless
`device=` says otherwise), `torch.device(...)`, `torch.nn.functional`, reductions that return
pairs, and the CUDA queries (`torch.cuda.is_available()`). The vocabulary is torch_api.py;
calls.py dispatches a resolved `torch.*` call here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import arguments
from devfix.analysis import torch_api as api
from devfix.analysis.arguments import Args
from devfix.analysis.tree import defaults_to_a_constant
from devfix.analysis.values import HOST, UNKNOWN, Kind, Origin, Place, Value, availability, derived, gpu_count

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.evaluate import Frame


def torch_function(frame: Frame, node: cst.Call, function: str, args: Args) -> Value:
    program = frame.program
    if function in api.FACTORIES or function in api.SCALAR_FACTORIES:
        return factory(frame, node, function, args)
    if function in api.FROM_HOST:
        data = args[0][1] if args else HOST
        if data.kind is Kind.TENSOR:
            return replace(data, member=False)
        place = arguments.device_keyword(args)
        if place is not Place.CPU:
            return Value(Kind.TENSOR, place)
        origin = Origin("host", node, loop=frame.loops[-1] if frame.loops else None)
        return Value(Kind.TENSOR, Place.CPU, frozenset({origin}))
    if function in api.LIKE_FACTORIES:
        like = args[0][1] if args else UNKNOWN
        device = arguments.keyword(args, "device")
        if device is not None:
            return Value(Kind.TENSOR, arguments.target_place(device[1], device[0].value))
        return replace(like, grad=False, member=False) if like.kind is Kind.TENSOR else UNKNOWN
    if function == "device":
        return torch_device(frame, node, args)
    if function in ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled"):
        return Value(Kind.OTHER, Place.UNKNOWN, qual=f"torch.{function}")
    if function in ("is_tensor", "numel", "manual_seed", "set_default_dtype", "get_default_dtype", "save"):
        return HOST
    if function == "set_default_tensor_type" or function == "set_default_device":
        program.default_device_changed = True
        if args and arguments.names_cuda(args[0]):
            program.gpu_only_calls.append(node)  # every factory after it asks CUDA: GPU code by design
        return HOST
    return other_torch(frame, node, f"torch.{function}", args)


def factory(frame: Frame, node: cst.Call, function: str, args: Args) -> Value:
    """`torch.zeros(...)`: a new tensor on the CPU unless `device=` says otherwise. A factory's
    `device=` is a keyword only, so a spread list of sizes (`torch.zeros(n, *shape)`) leaves it
    on the CPU; spread keywords (`**kwargs`) may name a device."""
    if any(arg.star == "**" for arg, _ in args):
        return UNKNOWN
    if function == "normal":
        # `torch.normal(mean_tensor, std_tensor)` is made where its tensors are (and takes no
        # `device=`): only the `(mean, std, size)` form of numbers is a factory
        given = [value for arg, value in args if arg.keyword is None or arg.keyword.value in ("mean", "std")][:2]
        if any(value.kind is not Kind.HOST for value in given):
            tensors = [value for value in given if value.kind is Kind.TENSOR]
            return derived(Kind.TENSOR, tensors, grad=False) if len(tensors) == len(given) else UNKNOWN
    device = arguments.keyword(args, "device")
    grad = arguments.keyword(args, "requires_grad") is not None
    if device is not None:
        place = arguments.target_place(device[1], device[0].value)
        origins = (
            frozenset(
                {Origin("move", node, device=device[0].value, note=arguments.device_flag(device[1], device[0].value))}
            )
            if place is Place.DEVICE
            else frozenset()
        )
        return Value(Kind.TENSOR, place, origins, grad=grad)
    out = arguments.keyword(args, "out")
    if out is not None:
        # `torch.arange(0, n, out=torch.cuda.LongTensor(n))`: the result is `out`, where it lives
        return replace(out[1], member=False) if out[1].kind is Kind.TENSOR else UNKNOWN
    if frame.program.default_device_changed or frame.device_context:
        return UNKNOWN
    positional = arguments.positional(args)
    if function in api.SCALAR_FACTORIES and positional:
        data = positional[0][1]
        if data.kind is Kind.TENSOR:
            return replace(data, member=False)
        if (
            (data.kind is Kind.HOST and not isinstance(positional[0][0].value, (cst.List, cst.Tuple, cst.ListComp)))
            or _number_parameter(frame, positional[0][0].value, data)
            or _a_power(positional[0][0].value, data)
            or _a_type_limit(frame, positional[0][0].value)
        ):
            return Value(Kind.TENSOR, Place.CPU, frozenset({Origin("factory", node)}), scalar=True)
    loop = frame.loops[-1] if frame.loops else None
    return Value(Kind.TENSOR, Place.CPU, frozenset({Origin("factory", node, loop=loop)}), grad=grad)


def _a_power(node: cst.BaseExpression, value: Value) -> bool:
    """`torch.tensor(self.config.n_embd**0.5, dtype=x.dtype)` (litgpt's embedding scale): a
    setting read off an object, raised to a number literal, is a number (a list has no `**`;
    an array is what a name or a call gives, not a configuration's attribute), so the tensor is
    0-dim, which PyTorch lets meet tensors on any device."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Power)
        and isinstance(node.left, cst.Attribute)
        and isinstance(node.right, (cst.Integer, cst.Float))
        and value.kind is not Kind.TENSOR
    )


def _a_type_limit(frame: Frame, node: cst.BaseExpression) -> bool:
    """`torch.tensor(torch.finfo(scores.dtype).min)` (bert4torch's ALiBi attention): a number
    type's limit is a Python number, so the tensor is 0-dim."""
    if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Call)):
        return False
    callee = frame.program.values.get(id(node.value.func))
    return callee is not None and callee.qual in api.TYPE_INFO and node.attr.value in api.TYPE_LIMITS


def _number_parameter(frame: Frame, node: cst.BaseExpression, value: Value) -> bool:
    """`torch.tensor(eps)` in `def attention_matrix(x1, x2, eps=1e-6)`: a parameter that
    defaults to a number and holds no tensor devfix knows of makes a 0-dim tensor
    (Text-Similarity's ABCNN)."""
    function = frame.function
    return (
        isinstance(node, cst.Name)
        and value.kind is not Kind.TENSOR
        and function is not None
        and any(p.name.value == node.value and defaults_to_a_constant(p) for p in function.parameters())
    )


def torch_device(frame: Frame, node: cst.Call, args: Args) -> Value:
    """`torch.device(...)`: where it points on a GPU machine, and how it was chosen."""
    positional = arguments.positional(args)
    if not positional:
        return Value(Kind.DEVICE, Place.UNKNOWN)
    arg, value = positional[0]
    if value.kind is Kind.DEVICE:
        if value.place is Place.DEVICE and not value.origins:
            return replace(value, origins=frozenset({Origin("move", node, device=node, note=value.flag or "unknown")}))
        return value
    place = arguments.target_place(value, arg.value)
    if place is Place.NONE:
        place = Place.UNKNOWN
    flag = value.flag if value.flag in ("available", "choice") else arguments.device_flag(value, arg.value)
    if len(positional) > 1 and place is Place.UNKNOWN and value.text is not None:
        place = Place.DEVICE if api.device_string_place(value.text) == "device" else place
    origins = frozenset({Origin("move", node, device=node, note=flag)}) if place is Place.DEVICE else frozenset()
    return Value(Kind.DEVICE, place, origins, flag=flag)


def functional(frame: Frame, node: cst.Call, name: str, args: Args) -> Value:
    """`F.cross_entropy(out, y)`, `F.relu(x)`, `F.embedding(ids, weight)`: tensors meet."""
    if name == "pack_padded_sequence":
        positional = arguments.positional(args)
        lengths = arguments.keyword(args, "lengths") or (positional[1] if len(positional) > 1 else None)
        if lengths is not None and lengths[1].kind is Kind.TENSOR:
            frame.program.meet(
                lengths[0].value, "host", [(lengths[0].value, lengths[1])], detail="pack_padded_sequence lengths"
            )
        data = positional[0][1] if positional else UNKNOWN
        return replace(data, member=False) if data.kind is Kind.TENSOR else UNKNOWN
    if name == "pad_packed_sequence":
        # `x, lengths = pad_packed_sequence(packed)`: the batch where the packed one is, its
        # lengths always a CPU tensor (a speech encoder returns `lengths // 8` for masks)
        packed = arguments.positional(args)[0][1] if arguments.positional(args) else UNKNOWN
        padded = replace(packed, member=False) if packed.kind is Kind.TENSOR else UNKNOWN
        sizes = Value(Kind.TENSOR, Place.CPU, frozenset({Origin("cpu", node)}))
        return Value(Kind.STRUCT, padded.place, padded.origins, items=(padded, sizes))
    if name == "ctc_loss":
        args = log_probs_only(args)
    if name in _SIZED:
        args = args[:1]  # `F.pad(x, [dx // 2, dx - dx // 2])`: the sizes become Python ints
    tensors = arguments.tensors(
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


# Functionals whose arguments after the input are sizes (a tensor there is read as a number:
# SegmenTron's U-Net pads by `torch.tensor([diff])`), never operands that meet the input.
_SIZED = frozenset(
    {"pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "adaptive_avg_pool1d",
     "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}
)  # fmt: skip


PAIRED_REDUCTIONS = frozenset({"max", "min", "median", "mode", "topk", "sort", "kthvalue"})


def pairs(value: Value) -> Value:
    """`torch.max(x, 1)`, `x.topk(k)`, `x.sort()`: (values, indices) — indices need no grad."""
    if value.kind is not Kind.TENSOR:
        return value
    indices = replace(value, grad=False)
    return Value(Kind.STRUCT, value.place, value.origins, items=(value, indices), element=value)


def other_torch(frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
    """Any other torch function: its tensor arguments meet; the result lives with them."""
    name = qual.split(".")[-1]
    result = torch_result(frame, node, qual, name, args)
    along_dim = len(arguments.positional(args)) > 1 or arguments.keyword(args, "dim") is not None
    if name in PAIRED_REDUCTIONS and (along_dim or name in ("topk", "sort", "kthvalue")):
        return pairs(result)
    return result


def torch_result(frame: Frame, node: cst.Call, qual: str, name: str, args: Args) -> Value:
    if qual.startswith("torch.nn.utils.rnn.") and name in ("pack_padded_sequence", "pad_packed_sequence"):
        return functional(frame, node, name, args)
    if qual in api.LEGACY_LUA_LOADERS:
        return Value(Kind.OTHER, Place.UNKNOWN, qual=qual)  # its `.cuda()` is its own: no `.to()` to write
    if qual.startswith(("torch.nn.utils.", "torch.nn.init.")) or (
        qual.startswith("torch.utils.") and "data" not in qual
    ):
        return UNKNOWN
    tensors = arguments.tensors(
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


def cuda_query(frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
    """`torch.cuda.is_available()` is true on a GPU machine; other torch.cuda calls are CUDA-only."""
    if qual == "torch.cuda.device_count":
        return gpu_count()  # one GPU: see `operations._gpu_count_test`
    if qual in api.AVAILABILITY_CHECKS:
        return availability()
    if qual in api.CUDA_ONLY_VALUES:
        frame.program.gpu_only_calls.append(node)
    if qual in api.CUDA_COMMUNICATION:
        frame.program.gpu_only_calls.append(node)
        return UNKNOWN  # tensors on the GPUs it names
    return HOST


def log_probs_only(args: Args) -> Args:
    """The arguments of a CTC loss that must be on the device: its log-probabilities. Its
    targets and lengths may stay on the CPU (cuDNN's CTC even requires CPU lengths)."""
    positional = arguments.positional(args)
    keyword = arguments.keyword(args, "log_probs") or arguments.keyword(args, "input")
    chosen = keyword or (positional[0] if positional else None)
    return [chosen] if chosen is not None else []
