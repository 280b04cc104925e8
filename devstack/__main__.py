"""`python -m switchback.devstack up|down|status` — see devstack/cli.py."""

import sys

from switchback.devstack import cli

if __name__ == "__main__":
    sys.exit(cli.main())
