"""The reproduction of the paper: its published numbers, the toy example, Tables 3-4,
Figure 6's curves, and the check of its claims on our numbers.
"""
