"""Figures and tables as files: labels, Markdown and LaTeX tables, figures in one style.
Renders results; computes none.
"""
