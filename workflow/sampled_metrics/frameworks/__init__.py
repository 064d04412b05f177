"""The sampling protocols of recommender frameworks (NCF, Elliot, RecBole, BERT4Rec,
DaisyRec), simulated on real scores, and the frameworks' own evaluation read rank by
rank. The protocol study that runs every estimator on them is
:mod:`sampled_metrics.studies.protocols`.

- ``registry``      one record per framework: where its protocol was read, the
                    protocols the study simulates, the command line's preset
- ``draws``         drawing items by a popularity (or uniform) law
- ``simulate``      the protocols simulated on real scores: the sampled ranks
- ``rank_files``    any model's exact ranks and a protocol's sampled ranks, as the CLI
                    reads them
- ``adapters``      a framework's own evaluation read rank by rank (RecBole, cornac)
"""
