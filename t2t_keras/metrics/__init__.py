"""Evaluation: BLEU (sacreBLEU and the paper's tokenized BLEU) and EVALB."""
