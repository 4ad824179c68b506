# gradients come back to the device of the tensor they belong to, through casts and moves
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
w = torch.randn(3, device=device, requires_grad=True)  # a weight cast to float64 in forward
(w.double() * 2).sum().backward()
assert w.grad.device == w.device, w.grad.device
torch.optim.SGD([w], lr=0.1).step()
c = torch.randn(3, requires_grad=True)  # a CPU weight moved to the GPU in forward (offloading)
(c.to(device) * 2).sum().backward()
assert c.grad.device.type == "cpu", c.grad.device
torch.optim.SGD([c], lr=0.1).step()
g = torch.randn(3, device=device, requires_grad=True)  # a GPU weight read on the CPU
g.cpu().sum().backward()
assert g.grad.device == g.device, g.grad.device
torch.optim.SGD([g], lr=0.1).step()
print("ok")
