"""The workflow's own support (the top layer, beside :mod:`sampled_metrics.cli`).

* :mod:`.config`         the configuration's files, schema and look-ups; ``ConfigError``
* :mod:`.validation`     defaults from the schema, and every check a schema cannot make
                         (names, sizes the data must allow), before any work
* :mod:`.intermediates`  the files one stage writes and a later one reads, read back
                         with checks of what they must be
* :mod:`.runs`           a job's run: logs, inputs checked against their checksums,
                         threads, locks, provenance, the library's fingerprint
* :mod:`.rank_jobs`      a shard of the ranking pass, from the stored model and plan
"""
