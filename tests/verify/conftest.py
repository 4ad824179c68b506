def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a real CUDA device; skipped where torch.cuda.is_available() is false"
    )
