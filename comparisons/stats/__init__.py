"""The statistics of every verdict, as pure functions: they take data frames or arrays and return rows or numbers.

No file, path, figure, HTML or tracker here (tests/test_layers.py holds the rule): the report half
(comparisons/report/) reads run folders, calls these, and writes what people read. Each module is named for what
it computes; docs/statistics.md derives each method and tests/ checks it against an independent implementation.
"""
