"""Judging by bugs: known-bug canaries (kernels/canary.h) read back, inputs attributed to the bugs
they reach and trigger, a trial's time-to-bug, and survival statistics over trials.

- :mod:`page`: the canary page (size, make, read) and ``replay`` of inputs through a canary build.
"""
