import os
import sys

# the helper modules (tensors_testing, tensors_ops) live next to the tests
sys.path.insert(0, os.path.dirname(__file__))
