# yolov7's ComputeLossOTA.build_targets: the function names the device of its targets, then
# makes empty placeholders on a hard-coded 'cuda:0'. The named device is the fix: the
# placeholders go where the targets are, on either kind of machine.
import torch


def build_targets(targets, layers=3):
    device = torch.device(targets.device)
    matching = [[] for _ in range(layers)]
    for index in range(layers):
        rows = targets[targets[:, 0] == index]
        if len(rows):
            matching[index].append(rows[:, 1].long().to(device))
    for index in range(layers):
        if matching[index] != []:
            matching[index] = torch.cat(matching[index], dim=0)
        else:
            matching[index] = torch.tensor([], device=device, dtype=torch.int64)
    return matching


print([m.shape for m in build_targets(torch.tensor([[0.0, 2.0], [2.0, 1.0]]))])
