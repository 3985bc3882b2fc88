import os

# Tests run on shared 2-core machines: keep torch from oversubscribing them.
os.environ.setdefault("OMP_NUM_THREADS", "1")
