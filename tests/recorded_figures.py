"""The recorded tune figures (golden/tune_figures.json) the tests replay instead of measuring, and
the layouts they were recorded with: a layout added since has no figures, so the searches over
recorded figures are limited to these."""

import json
from pathlib import Path

from autotune.vocabulary import LAYOUTS

FIGURES = json.loads((Path(__file__).parent / "golden" / "tune_figures.json").read_text())
RECORDED_LAYOUTS = tuple(lay for lay in LAYOUTS if any(f"/{lay}/" in k for k in FIGURES["execs_per_s"]))
