"""Jobs that use decoding beside translating lines: scoring given outputs
and reading alignments from the attention."""
