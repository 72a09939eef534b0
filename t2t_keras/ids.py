"""The reserved token ids, in one place (tensor2tensor's convention).

0 is padding, and also the decoder's start symbol (targets are shifted right
by one position); 1 is the end of a sentence. Vocabularies put their pieces
after these.
"""

PAD_ID = 0
EOS_ID = 1
