"""Export: SavedModels for TF Serving (strings in, translations out)."""
