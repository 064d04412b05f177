"""Figures and tables as files: renders results, computes none.

* :mod:`.labels`   names as the paper prints them (methods read from the estimator registry)
* :mod:`.tables`   numbers, the paper's layouts, ours beside the paper's, Markdown, LaTeX
* :mod:`.figures`  every figure, one module per figure or family, in one style
"""
