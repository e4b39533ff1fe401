"""Calibration: published measurements, the fit of the step model's constants, and its honest error."""
