"""The parts of ``benchmarks/bench_coverage.py`` (do the printed intervals hold?):

* :mod:`.populations`  exact ranks (the pipeline's, a heavy-tailed synthetic one) and the
                       sampled ranks drawn from them, alone or paired
* :mod:`.shortcuts`    memos of pure library functions while the benchmark runs
* :mod:`.cells`        one cell's seeds: the intervals, kept as raw records
* :mod:`.summary`      coverage, its error, width, bias / half-width; text and Markdown
"""
