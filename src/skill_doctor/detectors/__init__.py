"""detectors: one module per criterion, each measuring one thing about a session.

Each detector takes the session's `Facts` and its parameters and returns a `Measurement`: the
measured value (which the rubric's bands turn into points), the turns that justify it, and a
one-line summary in plain words. Detectors declare their parameters (type, default) beside
their code; ids, points, bands and suggestion text live in `rubric.yaml`. A detector never
reads files or config.

Each detector's docstring is its documentation (`skill-doctor rubric explain`): what it
measures, why it matters, an example, and what to do instead. The modules are named after the
contract's criteria, so a reader who wants to know why a criterion scored what it did opens
one file.
"""

from ._base import DETECTORS, Detector, Evidence, Measurement, detector

# Importing the criterion modules registers their detectors.
from . import (correct_file_identification, minimal_diff, pattern_adherence,  # noqa: E402,F401
               regression_avoidance, retry_waste, task_completion, turn_economy,
               unnecessary_exploration)

__all__ = ["DETECTORS", "Detector", "Evidence", "Measurement", "detector"]
