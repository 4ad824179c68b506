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
    ("fail_tensor_attribute.py", "DEV012", []),
    ("fail_numpy_output.py", "DEV009", []),
    ("fail_pin_gpu_dataset.py", "DEV005", []),
    ("fail_getitem_worker.py", "DEV006", []),
    ("fail_dataparallel_cpu_model.py", "DEV003", []),
    ("fail_adagrad_before_move.py", "DEV003", []),
    ("fail_gan_labels.py", "DEV008", []),
    ("fail_load_no_map_location.py", "DEV010", ["--cpu-only-load"]),
    ("fail_packed_lengths_on_gpu.py", "DEV004", []),
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
    ("fail_load_no_map_location.py", []),  # without --cpu-only-load the GPU checkpoint loads
    ("fail_cuda1_one_gpu.py", TWO_GPUS),  # the second GPU exists
    ("pass_model_parallel.py", TWO_GPUS),
    ("pass_dataparallel_two_gpus.py", TWO_GPUS),
    ("pass_cuda_device_api.py", TWO_GPUS),
]

_TWO = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"

# the exact text real CUDA PyTorch (2.13) raises, for the scripts added with the
# multi-GPU simulation (docs/verify.md says where each comes from)
EXACT = {
    "fail_cuda1_one_gpu.py": "CUDA error: invalid device ordinal",
    "fail_two_gpus_meet.py": _TWO.format("cuda:1", "cuda:0"),
    "fail_dataparallel_attribute.py": _TWO.format("cuda:1", "cuda:0"),
}


def gpus_needed(opts) -> int:
    return int(opts[opts.index("--devices") + 1]) if "--devices" in opts else 1
