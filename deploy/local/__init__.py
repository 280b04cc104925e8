"""A multi-process deployment on one machine: see fleet.py."""
