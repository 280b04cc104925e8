"""How to run switchback beyond one process: compose, Kubernetes, a local fleet."""
