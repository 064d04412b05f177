"""Sampled metrics for item recommendation (Krichene & Rendle, KDD 2020).

Modules, by what they hold:

- ``metrics``      the metrics of section 3 (eqs 2-13), one definition each
- ``laws``         the law of the sampled rank p(r~ | r) (section 4.3)
- ``expected``     expected sampled metrics (eqs 16, 18, 19)
- ``corrections``  corrected metrics (section 5, eqs 20-26)
- ``datasets``     loaders and the leave-last-out split
- ``recommenders`` iALS (X) and item-kNN (Y, Z) of section 9
- ``ranking``      exact and sampled ranks of held-out items
"""
