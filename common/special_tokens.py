"""The two special tokens every vocabulary shares, with their ids: padding 0, unknown 1.

Both the regex vocabulary (common/vocabulary.py) and the WordPiece one (common/subword.py) use
them, so either can feed both scratch twins; kept apart so neither module imports the other's.
"""
PAD, UNK = "<pad>", "<unk>"
PAD_ID, UNK_ID = 0, 1
