"""The sampling protocols of recommender frameworks (NCF, Elliot, RecBole, BERT4Rec,
DaisyRec), simulated on real scores, and the estimators applied to them.

- ``registry``      one record per framework: where its protocol was read, the
                    protocols the study simulates, the command line's preset
- ``draws``         drawing items by a popularity (or uniform) law
- ``simulate``      the protocols simulated on real scores: the sampled ranks
- ``estimates``     every estimator on the simulated ranks
- ``rank_files``    any model's exact ranks and a protocol's sampled ranks, as the CLI
                    reads them
- ``study_report``  the study's report, protocols.md
- ``adapters``      a framework's own evaluation read rank by rank (RecBole, cornac)
"""
