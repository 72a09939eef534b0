"""Looking inside a model: attention pictures (t2t-attention) and the
paper's cost tables (t2t-analyze)."""
