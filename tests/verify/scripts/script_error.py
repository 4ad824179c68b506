import sys

import torch

print("args", sys.argv[1:])
raise ValueError("boom from the script")
