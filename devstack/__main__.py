"""`python -m devstack up|down|status` — see devstack/cli.py."""

import sys

from devstack import cli

if __name__ == "__main__":
    sys.exit(cli.main())
