import os
import sys

# The package lives in python/ and is not installed for these tests.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
