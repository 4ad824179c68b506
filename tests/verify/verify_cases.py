"""The scripts the verify tests run, with what the verifier must say about them.

Shared by test_verify_verdicts.py (the simulated run) and test_verify_gpu.py (the
same scripts run for real on a CUDA machine, which must agree).
"""

TWO_GPUS = ["--devices", "2"]

MUST_FAIL = [
    # script, rule (None: no devfix rule fixes it), extra options
    ("fail_cpu_batch_gpu_model.py", "DEV004", []),
    ("fail_gpu_batch_cpu_model.py", "DEV003", []),
    ("fail_lstm_h0.py", "DEV007", []),
    ("fail_helper_of_forward_makes_cpu_tensor.py", "DEV007", []),
    ("fail_from_numpy_in_forward.py", "DEV007", []),
    ("fail_tensor_attribute.py", "DEV012", []),
    ("fail_numpy_output.py", "DEV009", []),
    ("fail_pin_gpu_dataset.py", "DEV005", []),
    ("fail_getitem_worker.py", "DEV006", []),
    ("fail_dataparallel_cpu_model.py", "DEV003", []),
    ("fail_adagrad_before_move.py", "DEV003", []),
    ("fail_gan_labels.py", "DEV008", []),
    ("fail_load_no_map_location.py", "DEV010", ["--cpu-only-load"]),
    ("fail_packed_lengths_on_gpu.py", "DEV004", []),
    ("fail_legacy_type_batch_not_moved.py", "DEV004", []),
    # indexing across devices
    ("fail_onehot_cpu_eye.py", "DEV008", []),
    ("fail_index_table_attribute.py", "DEV012", []),
    ("fail_embedding_cpu_weight.py", "DEV003", []),
    ("fail_scatter_onehot_forward.py", "DEV007", []),
    ("fail_gather_cpu_index.py", "DEV008", []),
    # more than one GPU
    ("fail_cuda1_one_gpu.py", None, []),
    ("fail_two_gpus_meet.py", None, TWO_GPUS),
    ("fail_dataparallel_attribute.py", "DEV012", TWO_GPUS),
]

MUST_PASS = [
    ("pass_mnist_like.py", []),
    ("pass_word_lm.py", []),
    ("pass_dcgan.py", []),
    ("pass_dataparallel.py", []),
    ("pass_buffer_mask.py", []),
    ("pass_load_map_location.py", ["--cpu-only-load"]),
    ("pass_workers_cpu_dataset.py", []),
    ("pass_packed_sequence.py", []),
    ("pass_legacy_cuda_tensor_type.py", []),
    ("fail_load_no_map_location.py", []),  # without --cpu-only-load the GPU checkpoint loads
    ("pass_onehot_device_eye.py", []),
    ("pass_index_table_buffer.py", []),
    ("pass_embedding_moved.py", []),
    ("pass_scatter_onehot_forward.py", []),
    ("pass_gather_device_index.py", []),
    ("pass_gradients_across_devices.py", []),
    ("pass_module_to_device_keyword.py", []),
    ("pass_pad_by_size_tensors.py", []),
    ("fail_cuda1_one_gpu.py", TWO_GPUS),  # the second GPU exists
    ("pass_model_parallel.py", TWO_GPUS),
    ("pass_dataparallel_two_gpus.py", TWO_GPUS),
    ("pass_cuda_device_api.py", TWO_GPUS),
]

_WRAPPER = (
    "Expected all tensors to be on the same device, but got {} is on {}, different from other "
    "tensors on {} (when checking argument in method {})"
)
_INDICES = "indices should be either on cpu or on the same device as the indexed tensor ({})"
_TWO = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"

# the exact text real CUDA PyTorch (2.13) raises, for the scripts added with the
# indexing and multi-GPU simulation (docs/verify.md says where each comes from)
EXACT = {
    "fail_onehot_cpu_eye.py": _INDICES.format("cpu"),
    "fail_index_table_attribute.py": _INDICES.format("cpu"),
    "fail_embedding_cpu_weight.py": _WRAPPER.format("index", "cuda:0", "cpu", "wrapper_CUDA__index_select"),
    "fail_scatter_onehot_forward.py": _WRAPPER.format("index", "cuda:0", "cpu", "wrapper_CUDA_scatter__value"),
    "fail_gather_cpu_index.py": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA_gather"),
    "fail_cuda1_one_gpu.py": "CUDA error: invalid device ordinal",
    "fail_two_gpus_meet.py": _TWO.format("cuda:1", "cuda:0"),
    "fail_dataparallel_attribute.py": _TWO.format("cuda:1", "cuda:0"),
    "fail_packed_lengths_on_gpu.py": "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor",
}

# indexing_cases.py CASE: the error each case raises on real CUDA
INDEXING_RAISES = {
    "cpu[gpu_index]": _INDICES.format("cpu"),
    "cpu[gpu_mask]": _INDICES.format("cpu"),
    "index_select(gpu, cpu_index)": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA__index_select"),
    "index_select(gpu, cpu_scalar)": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA__index_select"),
    "index_select(cpu, gpu_index)": _WRAPPER.format("index", "cuda:0", "cpu", "wrapper_CUDA__index_select"),
    "gather(gpu, cpu_rows)": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA_gather"),
    "scatter_(gpu, cpu_rows, 1.0)": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA_scatter__value"),
    "scatter(gpu, gpu_rows, cpu_src)": _WRAPPER.format("src", "cpu", "cuda:0", "wrapper_CUDA_scatter_src"),
    "scatter_add_(gpu, gpu_rows, cpu_src)": _WRAPPER.format("src", "cpu", "cuda:0", "wrapper_CUDA_scatter_add_"),
    "take(cpu, gpu_index)": _WRAPPER.format("index", "cuda:0", "cpu", "wrapper_CUDA__take"),
    "embedding(cpu_index, gpu)": _WRAPPER.format("index", "cpu", "cuda:0", "wrapper_CUDA__index_select"),
    "gpu[cpu_index] = cpu_src": _TWO.format("cuda:0", "cpu"),
}

# a project folder and a module of a project: (verify argv, real python argv, file, rule)
PROJECT_FAIL = [
    (["project_app"], ["project_app/train.py"], "project_app/models.py", "DEV012"),
    (["-m", "project_pkg.train"], ["-m", "project_pkg.train"], "project_lib/layers.py", "DEV007"),
]
PROJECT_PASS = [
    (["project_app", "--fixed"], ["project_app/train.py", "--fixed"]),
    (["-m", "project_pkg.train", "--fixed"], ["-m", "project_pkg.train", "--fixed"]),
]


def gpus_needed(opts) -> int:
    return int(opts[opts.index("--devices") + 1]) if "--devices" in opts else 1
