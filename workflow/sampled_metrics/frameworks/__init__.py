"""The sampling protocols of recommender frameworks (NCF, Elliot, RecBole, BERT4Rec,
DaisyRec), simulated on real scores, and the frameworks' own evaluation read rank by
rank. The protocol study that runs every estimator on them is
:mod:`sampled_metrics.studies.protocols`.

- ``registry``      one record per framework: where its protocol was read, the
                    protocols the study simulates, the command line's preset
- ``beaten``        the items a model ranks above the held-out one, by tie order
- ``draws``         drawing items by a popularity (or uniform) law
- ``simulate``      a paired protocol simulated on a block's scores: the sampled ranks;
                    ``cells`` the same for uniform draws, ``unpaired`` each model its own
- ``mask_pass``     every protocol, every model, over blocks of users from their masks
- ``protocol_pass`` the same from the models' scores, each block scored once
- ``rank_meta``     the sidecar of a rank file
- ``rank_files``    any model's exact ranks and a protocol's sampled ranks, as the CLI
                    reads them
- ``decide``        from models to a verdict: the sequential loop on any sampled
                    evaluation and any exact ranking of some users, in memory
- ``adapters``      a framework's own evaluation read rank by rank (RecBole, cornac)
"""
