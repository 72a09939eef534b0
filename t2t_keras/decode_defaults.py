"""Decoding constants the command line needs before TensorFlow is imported
(t2t-decoder's flags take their defaults and choices from here)."""

# Lines read and decoded before their outputs are written (t2t-decoder's
# --window_lines): memory is bounded by the window, not by the file.
DEFAULT_WINDOW = 1000

# CTranslate2's compute types (t2t-decoder's --ct2_compute_type).
COMPUTE_TYPES = ("default", "auto", "float32", "int8", "int8_float32",
                 "int16", "bfloat16", "int8_bfloat16")
