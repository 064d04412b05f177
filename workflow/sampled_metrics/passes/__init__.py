"""Passes over a model's scores: ties, exact ranks, sampled ranks and the block pass
that takes them all from one computation of each block of users' scores.

* :mod:`.ties`        tie policies and the seeded tie order (section 6.1)
* :mod:`.ranking`     exact ranks of held-out items (section 6.1)
* :mod:`.sampling`    candidate pools, uniform draws, sampled ranks with real scores
                      (sections 4, 6.2)
* :mod:`.draw_plan`   where each chunk of users finds its draws in every repetition's
                      random stream, so that blocks of users draw alone
* :mod:`.block_pass`  exact, pessimistic and sampled ranks by blocks of users, by shard
"""
