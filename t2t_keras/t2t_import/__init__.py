"""t2t-import: runs, vocabularies and data made by tensor2tensor, read
without it (docs/coming_from_tensor2tensor.md)."""
