"""What a checkpoint of batched starts keeps besides the run's own fields: the ledger, the start
solutions and the generators (each start's, and the exchanges'), with what the backend holds
(lsmgpu.parallel.batch: the batch evaluator's snapshot; lsmgpu.parallel.batch_ils: the
population's rows). One file of starts stepped together, read back by the same driver."""
from __future__ import annotations

import copy

import numpy as np

__all__ = ["batch_state", "restore_batch"]


def batch_state(search, held: dict) -> dict:
    """The batch's part of ``search.state()``: its ledger, start solutions and generators, and
    ``held`` (what its backend holds, as host arrays)."""
    return {"ledger": copy.deepcopy(search.ledger), "xs": search._xs.copy(),
            "rngs": [r.bit_generator.state for r in search._rngs],
            "exchange_rng": search._exchange_rng.bit_generator.state, **held}


def restore_batch(search, state: dict) -> dict:
    """The ledger, start solutions and generators of ``state`` (a checkpoint of the same number of
    batched starts: ValueError otherwise) set on ``search``; returns the batch's part, whose
    backend arrays the caller puts back (until it has, ``_loaded`` is False: Ctrl-C in between
    returns the start solutions)."""
    search._loaded = False
    batch = state.get("batch")
    if batch is None or len(batch["rngs"]) != len(search.seeds):
        raise ValueError(f"MultiStart: the checkpoint is not of {len(search.seeds)} batched starts "
                         "(a checkpoint of starts run one after the other, or of another count)")
    search._rngs = [np.random.default_rng() for _ in search.seeds]
    for rng, saved in zip(search._rngs, batch["rngs"]):
        rng.bit_generator.state = saved
    search._exchange_rng = np.random.default_rng()
    search._exchange_rng.bit_generator.state = batch["exchange_rng"]
    search.ledger, search._xs = copy.deepcopy(batch["ledger"]), batch["xs"].copy()
    return batch
