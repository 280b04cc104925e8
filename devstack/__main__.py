"""`python -m devstack up|down|status` — see devstack/stack.py."""

import sys

from devstack import stack

if __name__ == "__main__":
    sys.exit(stack.main())
