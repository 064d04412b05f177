"""The sampling protocols of recommender frameworks (NCF, Elliot, RecBole, BERT4Rec,
DaisyRec), simulated on real scores, and the estimators applied to them.
"""
