"""Evaluation: BLEU (sacreBLEU and the paper's tokenized BLEU), chrF and TER;
parsing's EVALB is ``t2t_keras.parsing.evalb``."""
