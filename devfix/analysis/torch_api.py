"""The one vocabulary of torch APIs devfix knows, by fully qualified name.

Every other layer asks this module what a resolved name *is* (a tensor factory, a module
class, a loss, a data loader, an optimizer, a host library...) instead of keeping its own
lists. Names reach it already resolved through imports (`devfix.analysis.scopes.resolve`):
`nn.Linear`, `torch.nn.Linear` and `from torch import nn as tnn; tnn.Linear` all arrive
here as "torch.nn.Linear".
"""

from __future__ import annotations

import re

# The tables below are kept dense by hand: one name per line would triple the file.
# fmt: off
# -- tensors -----------------------------------------------------------------------------
# Factories that allocate a new tensor on the CPU unless given `device=`.
FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "range",
    "eye", "linspace", "logspace", "tensor", "tril_indices", "triu_indices", "empty_strided",
    "normal", "bartlett_window", "hann_window", "hamming_window", "blackman_window", "kaiser_window",
})
# Factories whose result is 0-dim when given a Python number (PyTorch lets 0-dim CPU tensors
# meet CUDA tensors in elementwise operations).
SCALAR_FACTORIES = frozenset({"tensor", "as_tensor", "scalar_tensor"})
# Constructors that copy host data into a new CPU tensor.
FROM_HOST = frozenset({"from_numpy", "as_tensor", "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor",
                       "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "BoolTensor", "CharTensor",
                       "BFloat16Tensor", "frombuffer", "asarray"})
# `torch.cuda.FloatTensor` and friends: CUDA-only, crash on a CPU-only machine.
CUDA_TENSOR_TYPES = frozenset(f"torch.cuda.{name}" for name in FROM_HOST if name.endswith("Tensor") and name != "Tensor")
CPU_TENSOR_TYPES = frozenset(f"torch.{name}" for name in FROM_HOST if name.endswith("Tensor"))
# `*_like` factories follow their argument.
LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"})
DTYPES = frozenset({
    "float", "float16", "float32", "float64", "half", "double", "bfloat16", "long", "int64", "int", "int32",
    "int16", "int8", "uint8", "bool", "complex64", "complex128", "short", "cfloat", "cdouble", "float8_e4m3fn",
})
# torch functions that combine several tensors: all must live on one device (a meeting).
COMBINING = frozenset({
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "matmul", "mm", "bmm",
    "einsum", "where", "add", "sub", "mul", "div", "true_divide", "pow", "maximum", "minimum", "dot", "outer",
    "cdist", "dist", "masked_fill", "lerp", "addmm", "baddbmm", "cross", "kron", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "bitwise_and", "bitwise_or", "cosine_similarity", "pairwise_distance", "atan2",
})
# torch functions whose index argument may not be a CUDA tensor when the source is on the CPU.
INDEXING = frozenset({"index_select", "gather", "take", "take_along_dim"})
# Tensor methods that combine the receiver with tensor arguments (a meeting).
COMBINING_METHODS = frozenset({
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "matmul", "mm", "bmm", "dot", "eq", "ne", "lt",
    "le", "gt", "ge", "masked_fill", "masked_fill_", "pow", "maximum",
    "minimum", "where", "lerp", "addmm", "addcmul", "addcdiv", "max", "min",
})
# Tensor methods that keep the receiver's device.
SAME_PLACE_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "expand", "repeat", "contiguous", "transpose", "permute", "t",
    "clone", "flatten", "unflatten", "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte",
    "char", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "softmax", "log_softmax", "sum", "mean", "std",
    "var", "prod", "cumsum", "norm", "argmax", "argmin", "argsort", "sort", "topk", "max", "min", "clamp", "clamp_",
    "round", "floor", "ceil", "neg", "sign", "chunk", "split", "narrow", "select", "index_select", "gather",
    "masked_select", "nonzero", "unique", "repeat_interleave", "roll", "flip", "tril", "triu", "diag", "fill_",
    "zero_", "normal_", "uniform_", "exp_", "mul_", "add_", "sub_", "div_", "pow", "masked_fill", "new_zeros",
    "new_ones", "new_empty", "new_full", "new_tensor", "squeeze_", "unsqueeze_", "detach", "detach_", "requires_grad_",
    "to_dense", "coalesce", "type_as", "reciprocal", "rsqrt", "square", "sin", "cos", "logsumexp", "all", "any",
    "masked_scatter", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_fill", "index_fill_", "index_add",
    "index_add_", "index_copy", "index_copy_", "copy_", "expand_as", "view_as", "reshape_as", "amax", "amin",
    "softplus", "pin_memory", "share_memory_", "unbind", "float_", "sigmoid_", "tanh_", "relu_", "matmul", "mm",
    "bmm", "dot", "eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "div", "logical_not", "isnan", "isinf",
})
# Tensor methods whose result is not a tensor (Python numbers, lists, sizes).
HOST_VALUE_METHODS = frozenset({"item", "tolist", "size", "dim", "numel", "nelement", "ndimension", "__len__", "data_ptr",
                                "get_device", "is_contiguous", "element_size", "stride", "storage_offset"})
# Tensor attributes that are not tensors.
NON_TENSOR_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names",
                                   "is_leaf", "is_sparse"})
# Tensor methods and torch functions whose result never requires grad.
NO_GRAD_RESULTS = frozenset({
    "detach", "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt", "ge", "le", "long", "int", "bool", "sign", "round",
    "isnan", "isinf", "nonzero", "byte", "floor", "ceil", "logical_not", "unique",
})
# The method names that put a tensor or a module on a device (the one definition of "a move").
MOVE_METHODS = frozenset({"to", "cuda"})
HOST_METHODS = frozenset({"cpu"})

# -- modules -----------------------------------------------------------------------------
# torch.nn classes that are not layers one calls on tensors.
NN_NON_MODULES = frozenset({"Parameter", "Module", "ParameterList", "ParameterDict", "UninitializedParameter",
                            "UninitializedBuffer", "ModuleList", "ModuleDict", "Sequential"})
NN_PARAMETERS = frozenset({"Parameter", "ParameterList", "ParameterDict", "UninitializedParameter", "UninitializedBuffer", "Module"})
# Modules that hold parameters, not layers: whatever they hold is registered with their owner.
PARAMETER_CONTAINERS = frozenset({"torch.nn.ParameterList", "torch.nn.ParameterDict",
                                  "torch.nn.modules.container.ParameterList", "torch.nn.modules.container.ParameterDict"})
# Containers hold whatever is put in them: their place is their children's.
NN_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# Layers without parameters or buffers: calling them never meets a weight, whatever their device.
NN_PARAMETER_FREE = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink",
    "Softshrink", "Hardshrink", "Threshold", "GLU", "LogSigmoid", "Identity", "Flatten", "Unflatten", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
    "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CosineSimilarity", "PairwiseDistance", "ChannelShuffle", "Fold", "Unfold",
})
# Losses whose first positional argument is a class-weight tensor.
LOSSES_WITH_POSITIONAL_WEIGHT = frozenset({"CrossEntropyLoss", "NLLLoss", "NLLLoss2d", "BCELoss", "BCEWithLogitsLoss",
                                           "MultiLabelSoftMarginLoss", "MultiMarginLoss"})
LOSS_TENSOR_KEYWORDS = ("weight", "pos_weight")
# Module methods that do not compute with tensors (calling them is not a meeting).
MODULE_BOOKKEEPING = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
    "named_modules", "train", "eval", "zero_grad", "state_dict", "load_state_dict", "apply", "requires_grad_",
    "register_buffer", "register_parameter", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_backward_hook", "add_module", "extra_repr", "half", "float", "double",
    "bfloat16", "type", "share_memory", "get_submodule", "get_parameter", "to_empty", "__repr__", "save_pretrained",
    "num_parameters", "count_params", "init_weights", "reset_parameters", "_init_weights",
})
# Every method `nn.Module` defines (torch 2.x): a subclass's method of one of these names may be
# called by torch itself (`.eval()` calls `train`, `.to()` calls `_apply`), never "by nobody".
NN_MODULE_METHODS = frozenset({
    "_apply", "_call_impl", "_get_name", "_load_from_state_dict", "_named_members", "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward",
    "_wrapped_call_impl", "add_module", "apply", "bfloat16", "buffers", "children", "compile", "cpu", "cuda", "double",
    "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter", "get_submodule", "half",
    "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children", "named_modules", "named_parameters",
    "parameters", "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter", "register_state_dict_post_hook",
    "register_state_dict_pre_hook", "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict",
    "to", "to_empty", "train", "type", "xpu", "zero_grad",
})
WRAPPERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.compile", "torch.jit.script",
                      "torch.jit.trace",
                      # reparametrisations that return the module they were given
                      "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                      "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm",
                      "torch.nn.utils.parametrizations.orthogonal"})
# Wrappers that place their module per process: the module's device is the framework's choice.
PLACING_WRAPPERS = frozenset({"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
                              "torch.distributed.fsdp.FullyShardedDataParallel", "torch.distributed.fsdp.fully_shard"})
MODEL_FACTORIES = frozenset({"timm.create_model", "torch.hub.load"})
MODEL_PACKAGES = ("torchvision.models.",)
MODULE_ROOTS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})

# -- data --------------------------------------------------------------------------------
DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
# The dataset classes of the domain libraries (`torchvision.datasets.UCF101(...)`): objects of the host.
DATASET_LIBRARIES = ("torchvision.datasets.", "torchaudio.datasets.", "torchtext.datasets.")
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
# Views of a dataset (`Subset(ds, idx)`, `random_split(ds, [0.8, 0.2])`): their items are its items.
DATASET_SUBSETS = frozenset({"torch.utils.data.Subset", "torch.utils.data.dataset.Subset"})
DATASET_SPLITS = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})
DATASET_ROOTS = frozenset({"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset",
                           "torch.utils.data.dataset.IterableDataset"})
# Wrappers around an iterable that yield its items (possibly with an index).
ITERATION_WRAPPERS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "rich.progress.track",
                                "tqdm.autonotebook.tqdm", "fastprogress.progress_bar", "fastprogress.fastprogress.progress_bar"})

# Parameter names that say "this is a data loader" (spec DEV004), for helpers nothing calls.
# Loaders of the legacy Lua port (PyTorch < 1.0): what they return is a `torch.legacy.nn`
# object with its own `.cuda()` and no `.to()` (pixel2style2pixel's sketch script).
LEGACY_LUA_LOADERS = frozenset({"torch.utils.serialization.load_lua"})
# CTC losses of other libraries (the warp-ctc bindings ESPnet-era speech code imports): like
# `nn.CTCLoss`, they take labels and lengths on the CPU whatever device the activations are on.
OTHER_CTC_LOSSES = frozenset({"warpctc_pytorch.CTCLoss", "torch_baidu_ctc.CTCLoss"})
# Names of the sequence lengths a model takes beside its inputs (`input_lengths`, `src_lens`):
# kept on the CPU by design (`pack_padded_sequence` wants them there, CTC takes them there).
LENGTHS_NAME = re.compile(r"^(?:[a-z0-9]+_)*(?:lengths?|lens)$", re.IGNORECASE)
LOADER_NAME = re.compile(r"^(?:[a-z_]*_)?(?:loader|dataloader|data_loader|dl)(?:_[a-z_]+)?$|^[a-z]+_?(?:loader|dl)$")

# Names of flags that say "use the GPU" (`use_cuda`, `args.gpu`, `self.on_gpu`, S3Rec's
# `args.cuda_condition`): a condition on one whose value the flow cannot follow is the
# user's choice of device (spec DEV002).
CUDA_FLAG_NAME = re.compile(
    r"^(?:use_?|on_?|with_?|enable_?|is_?|has_?)?(?:cuda|gpu|gpus|ngpus?|n_gpus?|num_gpus?|gpu_ids?|gpu_list|gpu_ranks|device_ids)"
    r"(?:_?(?:flag|enabled|available|mode|condition))?$|^[a-z_]*_(?:cuda|gpus?)$",
    re.IGNORECASE,  # a configuration's `cfg.CUDA`, `opt.USE_GPU`
)

# Names a program gives its device (`device`, `self._device`, `args.train_device`).
DEVICE_NAME = re.compile(r"^(device|dev|DEVICE|DEV|[A-Za-z_]*_device|device_[A-Za-z_]*)$")
# Names of a process's GPU index (`args.local_rank`, `rank`, `gpu_id`): `.to(local_rank)` is a GPU.
GPU_INDEX_NAME = re.compile(r"^(?:local_rank|rank|gpu|gpu_id|gpu_idx|gpu_index|device_id|cuda_id)$")
PLAIN_DEVICE_NAMES = frozenset({"device", "dev", "DEVICE", "DEV"})  # not one for a purpose (`data_device`)

# Names of flags that say "do not use the GPU" (`--no-cuda`, `--unuse_cuda`, `cfg.cpu_only`):
# true where there is none. A negating word, then optionally "use", then the accelerator.
NEGATIVE_FLAG_NAME = re.compile(
    r"(?:^|_)(?:no|not|non|un|dont|do_not|disable|disabled|without|skip|ignore)_?(?:use_?)?(?:cuda|gpus?)(?:$|_)"
    r"|cpu_?only|only_?cpu|use_?cpu|force_?cpu|^cpu$",
    re.IGNORECASE,
)


def is_negative_flag(name: str) -> bool:
    return NEGATIVE_FLAG_NAME.search(name) is not None


# Packages that only work with a CUDA GPU: a file that imports one at its top is GPU code by design.
# The fused kernels of Mamba and FlashAttention import their compiled CUDA extensions at once;
# RAPIDS' data frames and learners (cuDF, cuML, cuGraph) hold their data in GPU memory. The
# rasterizers and k-nearest-neighbour kernels of Gaussian splatting (a git submodule each, built
# with CUDAExtension: absent from a clone without its submodules), tiny-cuda-nn, gsplat, and the
# point-cloud kernels of PointNet++ (pointnet2_ops) and KNN_CUDA build only with nvcc; nvdiffrast's
# rasterizers (its CUDA and its OpenGL contexts alike) run on an NVIDIA GPU; torch-batch-svd's
# batched SVD (a rotation-invariant point-cloud network's every forward) is a CUDA kernel alone.
GPU_ONLY_PACKAGES = frozenset({"cupy", "cupyx", "pycuda", "pynvrtc", "tensorrt", "torch2trt", "mamba_ssm",
                               "causal_conv1d", "selective_scan_cuda", "flash_attn", "cudf", "dask_cudf", "cuml",
                               "cugraph", "diff_gaussian_rasterization", "diff_surfel_rasterization", "simple_knn",
                               "tinycudann", "gsplat", "pointnet2_ops", "knn_cuda", "nvdiffrast", "torch_batch_svd"})
# Triton's kernel decorators: a function under one is a kernel, launched on a CUDA device alone.
TRITON_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})
# Packages whose calls need a GPU, though a file may import them for an optional path: NVIDIA's
# apex (`amp.initialize` refuses CPU parameters; its fused optimizers and layers are CUDA kernels),
# DeepSpeed (`deepspeed.initialize` sets up its engine on the GPU of the process's local rank).
GPU_ONLY_CALLS = GPU_ONLY_PACKAGES | {"apex", "deepspeed", "bitsandbytes"}
# torch functions that raise on a CPU-only machine whatever they are given: the functional
# `data_parallel(model, x)` asks for the GPUs before it looks at its arguments ("device type
# could not be determined"); the `nn.DataParallel` module, by contrast, runs its module on a CPU.
# bitsandbytes' 8-bit and 4-bit weights, as transformers places them, live on a CUDA device.
# fairseq's `utils.CudaEnvironment()` reads `torch.cuda.current_device()` as it is built (a
# translation course's homework prints it before training).
GPU_ONLY_FUNCTIONS = frozenset({"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel",
                                "fairseq.utils.CudaEnvironment",
                                "transformers.utils.bitsandbytes.set_module_8bit_tensor_to_device",
                                "transformers.utils.bitsandbytes.set_module_quantized_tensor_to_device",
                                "transformers.integrations.bitsandbytes.set_module_quantized_tensor_to_device"})
# Keywords that load a model's weights in 8 or 4 bits through bitsandbytes (`from_pretrained(...,
# load_in_8bit=True)`), or with FlashAttention-2's CUDA kernels (transformers' older
# `use_flash_attention_2=True`): GPU code by design.
QUANTIZED_LOADS = frozenset({"load_in_8bit", "load_in_4bit", "use_flash_attention_2"})
# Libraries' classes whose `device` parameter defaults to CUDA: built without `device=`, they need a GPU.
GPU_BY_DEFAULT = frozenset({"autoattack.AutoAttack", "autoattack.autoattack.AutoAttack"})

# The collectives of `torch.distributed`: a function that calls one runs in a process group,
# whose NCCL backend needs the CUDA tensors it hands over (DEV002 leaves them).
COLLECTIVES = frozenset({"all_gather", "all_reduce", "all_to_all", "broadcast", "gather", "reduce", "reduce_scatter",
                         "scatter", "all_gather_into_tensor", "reduce_scatter_tensor"})


def is_collective(qual: str | None) -> bool:
    """`torch.distributed.all_reduce` and its kind: calls that hand tensors between processes."""
    return qual is not None and qual.startswith("torch.distributed.") and qual.rsplit(".", 1)[-1] in COLLECTIVES


# torch.cuda calls that need a GPU (they raise on a CPU-only machine). Side effects, alone on
# their line, DEV002 guards with an availability check; what the others give (an index, a name,
# an event, a stream) only has a meaning on a GPU: code that asks for it unconditionally is GPU
# code by design, and devfix does not rewrite it into code that half runs on a CPU.
CUDA_ONLY_STATEMENTS = frozenset({"torch.cuda.set_device", "torch.cuda.synchronize", "torch.cuda.ipc_collect",
                                  "torch.cuda.reset_peak_memory_stats"})
CUDA_ONLY_VALUES = frozenset({"torch.cuda.current_device", "torch.cuda.get_device_name", "torch.cuda.get_device_properties",
                              "torch.cuda.get_device_capability", "torch.cuda.Event", "torch.cuda.Stream",
                              "torch.cuda.mem_get_info", "torch.cuda.device", "torch.cuda.stream"})
# Copies between GPUs (`torch.cuda.comm.broadcast(t, devices=[...])`, the helpers DataParallel
# is built on): they raise on a CPU-only machine and give tensors on the GPUs they name.
CUDA_COMMUNICATION = frozenset(f"{module}.{name}" for module in ("torch.cuda.comm", "torch.nn.parallel.comm")
                               for name in ("broadcast", "broadcast_coalesced", "reduce_add",
                                            "reduce_add_coalesced", "scatter", "gather"))
# Readouts of the memory the GPU's tensors take, and the calls that make a measurement of the
# GPU with one (waiting for its kernels, resetting its peak): a readout gives 0 rather than
# raise on a CPU-only machine, but a scope that measures the GPU this way is a GPU benchmark.
GPU_MEMORY_READOUTS = frozenset({"torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated",
                                 "torch.cuda.memory_reserved", "torch.cuda.max_memory_reserved",
                                 "torch.cuda.memory_cached", "torch.cuda.max_memory_cached"})
GPU_MEASURING = frozenset({"torch.cuda.synchronize", "torch.cuda.reset_peak_memory_stats",
                           "torch.cuda.reset_max_memory_allocated"})

# -- devices -----------------------------------------------------------------------------
AVAILABILITY_CHECKS = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available", "torch.backends.mps.is_available",
                                 "torch.cuda.device_count", "torch.xpu.is_available"})
# Test decorators that skip on a condition (`skipUnless`: unless it holds).
SKIP_DECORATORS = frozenset({"pytest.mark.skipif", "unittest.skipIf", "unittest.skipUnless",
                             "unittest.case.skipIf", "unittest.case.skipUnless"})
# Another framework's GPU checks, tested around the GPU half of a converter or a test (genforce's
# `if not tf.test.is_built_with_cuda(): return` before the weights are compared on the GPU).
OTHER_AVAILABILITY_CHECKS = frozenset({"tensorflow.test.is_built_with_cuda", "tensorflow.test.is_gpu_available"})
# Factories whose tensor has one dimension: iterating it gives 0-dim tensors.
ONE_DIMENSIONAL_FACTORIES = frozenset({"torch.linspace", "torch.arange", "torch.logspace", "torch.randperm"})
# `torch.finfo(dtype).min`: a number type's limits are Python numbers.
TYPE_INFO = frozenset({"torch.finfo", "torch.iinfo"})
TYPE_LIMITS = frozenset({"min", "max", "eps", "tiny", "smallest_normal", "resolution"})
NO_GRAD_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                              "torch.set_grad_enabled"})
# `torch.jit.load` takes a `map_location` too: a TorchScript archive of a GPU model holds CUDA tensors.
LOADS = frozenset({"torch.load", "torch.serialization.load", "torch.jit.load", "torch.jit._serialization.load"})
SAVES = frozenset({"torch.save", "torch.serialization.save", "torch.jit.save", "torch.jit._serialization.save"})

# -- host-side consumers -----------------------------------------------------------------
HOST_LIBRARIES = ("numpy", "sklearn", "scipy", "pandas", "matplotlib", "PIL", "cv2", "seaborn")
# Builtins and methods that accept any tensor without computing with it on a device.
NEUTRAL_BUILTINS = frozenset({"print", "len", "str", "repr", "int", "float", "bool", "format", "isinstance", "type", "id",
                              "hash", "list", "tuple", "set", "sorted", "dict", "zip", "range", "getattr", "hasattr",
                              "setattr", "vars", "enumerate", "iter", "next", "map", "filter", "round", "abs", "min", "max", "sum", "any", "all"})

# -- frameworks that place things themselves ---------------------------------------------
SELF_PLACING = ("accelerate", "lightning", "pytorch_lightning", "deepspeed", "ignite", "fastai", "torch.distributed",
                "torch.multiprocessing", "transformers.Trainer", "colossalai", "horovod")


# fmt: on


def torch_function(qual: str | None) -> str | None:
    """ "zeros" for "torch.zeros"; None for anything not directly under `torch`."""
    if qual and qual.startswith("torch.") and qual.count(".") == 1:
        return qual[6:]
    return None


def functional_name(qual: str | None) -> str | None:
    """ "cross_entropy" for "torch.nn.functional.cross_entropy"."""
    if qual and qual.startswith("torch.nn.functional."):
        return qual[len("torch.nn.functional.") :]
    return None


def nn_class(qual: str | None) -> str | None:
    """ "Linear" for "torch.nn.Linear" (also `torch.nn.modules.linear.Linear`): a torch.nn layer class."""
    if not qual or not qual.startswith("torch.nn."):
        return None
    parts = qual.split(".")
    last = parts[-1]
    if not last[:1].isupper() or "functional" in parts or "init" in parts or "utils" in parts or "parameter" in parts:
        return None
    if last in NN_PARAMETERS:
        return None  # `nn.Parameter(t)` is a tensor, not a layer
    if qual in WRAPPERS or qual in PLACING_WRAPPERS or last in ("DataParallel", "DistributedDataParallel"):
        return None
    return last


def is_dtype(qual: str | None) -> bool:
    return qual is not None and qual.startswith("torch.") and qual.count(".") == 1 and qual[6:] in DTYPES


# Packages whose loss classes hold no tensor unless handed one (a class weight): MONAI's
# `DiceCELoss(to_onehot_y=True, softmax=True)`, as torch's own losses without `weight=`.
LOSS_PACKAGES = ("monai.losses.",)


def other_loss_class(qual: str | None) -> str | None:
    """ "DiceCELoss" for "monai.losses.DiceCELoss": a loss class of such a package."""
    if not qual or not qual.startswith(LOSS_PACKAGES):
        return None
    last = qual.rsplit(".", 1)[-1]
    return last if last.endswith("Loss") and last[:1].isupper() else None


def is_loss_class(name: str) -> bool:
    return name.endswith("Loss") or name in ("CTCLoss", "TripletMarginWithDistanceLoss", "NLLLoss2d")


def is_model_factory(qual: str | None) -> bool:
    """`torchvision.models.resnet18`, `timm.create_model`: build a module on the CPU."""
    if not qual:
        return False
    if qual in MODEL_FACTORIES:
        return True
    return any(
        qual.startswith(prefix) and qual.count(".") >= 2 and qual.split(".")[-1][:1].islower()
        for prefix in MODEL_PACKAGES
    )


def is_model_class(qual: str) -> bool:
    """`torchvision.models.ResNet`: a model library's module class, which a project may subclass."""
    last = qual.split(".")[-1]
    return (
        any(qual.startswith(prefix) for prefix in MODEL_PACKAGES)
        and last[:1].isupper()
        and not last.endswith("Weights")
    )


def is_optimizer(qual: str | None) -> bool:
    if not qual or not qual.startswith("torch.optim."):
        return False
    last = qual.split(".")[-1]
    return last[:1].isupper() and "lr_scheduler" not in qual and "swa_utils" not in qual


def is_host_library(qual: str | None) -> bool:
    return qual is not None and qual.split(".")[0] in HOST_LIBRARIES


def is_self_placing(qual: str | None) -> bool:
    return qual is not None and any(qual == p or qual.startswith(p + ".") for p in SELF_PLACING)


def gpu_number(text: str) -> int | None:
    """The GPU a device string names by number: 2 for "cuda:2"; None for "cuda" (the current
    GPU) and anything else."""
    return int(text[5:]) if text.startswith("cuda:") and text[5:].isdecimal() else None


def device_string_place(text: str) -> str | None:
    """ "cpu" / "device" for a device string, None when it names no device."""
    kind = text.split(":")[0].strip().lower()
    if kind == "cpu":
        return "cpu"
    if kind in ("cuda", "mps", "xpu", "gpu", "npu", "hpu"):
        return "device"
    return None


def is_lr_scheduler(qual: str) -> bool:
    """A learning-rate schedule: a `torch.optim.lr_scheduler` class, or one of Hugging Face's
    `get_*_schedule*` functions (`transformers.get_linear_schedule_with_warmup`)."""
    if qual.startswith("torch.optim.lr_scheduler."):
        return True
    last = qual.rsplit(".", 1)[-1]
    return qual.startswith("transformers.") and last.startswith("get_") and "schedule" in last
