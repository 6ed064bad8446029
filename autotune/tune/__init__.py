"""tune: choose map size, counter width, metric and layout by Bayesian optimisation (scikit-optimize)."""
