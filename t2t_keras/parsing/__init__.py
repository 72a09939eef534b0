"""Constituency parsing: trees as lines, the decoding constraints that keep an
output a well-formed tree, and EVALB."""
