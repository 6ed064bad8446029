"""measure: the per-exec cost of each map layout/size/counter width on this host (kernels/bench.c)."""
