# the device API of a two-GPU machine: device_count, set_device, current_device, torch.cuda.device
import torch

assert torch.cuda.is_available() and torch.cuda.device_count() == 2, torch.cuda.device_count()
assert torch.cuda.current_device() == 0
torch.cuda.set_device(1)
assert torch.cuda.current_device() == 1
assert torch.zeros(2, device="cuda").device == torch.device("cuda:1")
assert torch.ones(2).cuda().get_device() == 1
with torch.cuda.device(0):
    assert torch.cuda.current_device() == 0
    assert torch.randn(2).to("cuda").device == torch.device("cuda:0")
assert torch.cuda.current_device() == 1
torch.cuda.set_device(0)
a, b = torch.ones(3, device="cuda:0"), torch.ones(3, device="cuda:1")
assert (a + b.to(a.device)).device == torch.device("cuda:0")
assert b.cpu().device.type == "cpu" and b.is_cuda and a.get_device() == 0
print(torch.cuda.get_device_name(1), [torch.cuda.get_device_capability(i) for i in range(2)])
