//! Episodes of the recall task and their seeded sampler (numerics §1).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// One episode: `k` distinct key classes, the value class stored under each, and the order in
/// which they are queried after all writes. Writes happen in `keys` order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Episode {
    /// Key classes `a_1 … a_k`, distinct, each in `0..V`.
    pub keys: Vec<usize>,
    /// Value classes `b_1 … b_k`, each in `0..V_b` (repeats allowed).
    pub values: Vec<usize>,
    /// A permutation of `0..k`: query `i` reads pair `query_order[i]`.
    pub query_order: Vec<usize>,
}

impl Episode {
    /// An episode of `k` pairs with every field zero-filled, ready for [`EpisodeSampler::sample_into`].
    pub fn with_pairs(k: usize) -> Self {
        Self {
            keys: vec![0; k],
            values: vec![0; k],
            query_order: vec![0; k],
        }
    }
}

/// Draws episodes from one ChaCha8 stream (numerics §1): keys by a partial Fisher–Yates shuffle of
/// `0..V` (uniform without replacement), values uniform with replacement from `0..V_b`, query
/// order by a Fisher–Yates shuffle of `0..k`. Allocation-free after construction.
#[derive(Clone, Debug)]
pub struct EpisodeSampler {
    rng: ChaCha8Rng,
    n_keys: usize,
    n_values: usize,
    pool: Vec<usize>,
}

impl EpisodeSampler {
    /// A sampler over `n_keys` key classes and `n_values` value classes, reading `rng`.
    pub fn new(rng: ChaCha8Rng, n_keys: usize, n_values: usize) -> Self {
        Self {
            rng,
            n_keys,
            n_values,
            pool: (0..n_keys).collect(),
        }
    }

    /// Overwrites `ep` (whose length `k` ≤ V fixes the pair count) with a fresh episode.
    /// Panics if `k > V`.
    pub fn sample_into(&mut self, ep: &mut Episode) {
        let k = ep.keys.len();
        assert!(
            k <= self.n_keys,
            "cannot draw {k} distinct keys from {}",
            self.n_keys
        );
        for (i, p) in self.pool.iter_mut().enumerate() {
            *p = i;
        }
        for i in 0..k {
            let j = self.rng.random_range(i..self.n_keys);
            self.pool.swap(i, j);
            ep.keys[i] = self.pool[i];
        }
        for b in ep.values.iter_mut() {
            *b = self.rng.random_range(0..self.n_values);
        }
        for (i, q) in ep.query_order.iter_mut().enumerate() {
            *q = i;
        }
        for i in (1..k).rev() {
            let j = self.rng.random_range(0..=i);
            ep.query_order.swap(i, j);
        }
    }

    /// A new episode of `k` pairs.
    pub fn sample(&mut self, k: usize) -> Episode {
        let mut ep = Episode::with_pairs(k);
        self.sample_into(&mut ep);
        ep
    }
}
