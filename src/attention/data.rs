//! The attention task: addition modulo p, every ordered pair (a, b) once, as the three-token
//! sequence `[a, b, =]` whose label is (a + b) mod p. A seeded fraction of the p² pairs is the
//! full-batch training set, the rest the validation set.

use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::rng::{Stream, stream};

/// Tokens per sequence: `a`, `b` and the `=` sign.
pub const SEQ_LEN: usize = 3;

/// The task as written in a preset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskConfig {
    /// The modulus p, 2..=[`MAX_MODULUS`]: residues 0..p are tokens 0..p, token p is `=`, so the
    /// vocabulary has p + 1 tokens and the classifier p classes. Default 47.
    pub modulus: usize,
    /// Fraction of the p² pairs in the training set, in (0, 1); the count is rounded down and
    /// both sets must be non-empty. Default 0.4 (883 of 2209 pairs at p = 47).
    pub train_fraction: f64,
}

/// Largest modulus a preset may ask for.
pub const MAX_MODULUS: usize = 256;

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            modulus: 47,
            train_fraction: 0.4,
        }
    }
}

impl TaskConfig {
    /// Tokens in the vocabulary: the p residues and `=`.
    pub fn vocab(&self) -> usize {
        self.modulus + 1
    }

    /// Pairs in the training set: ⌊fraction · p²⌋.
    pub fn train_count(&self) -> usize {
        (self.train_fraction * (self.modulus * self.modulus) as f64).floor() as usize
    }
}

/// A set of sequences, stored position-major: token `t` of sequence `i` is `tokens[t·n + i]`,
/// so the sequences' tokens at one position form a contiguous block (the model's columns follow
/// the same order).
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Number of sequences n.
    pub n: usize,
    /// `SEQ_LEN · n` token ids.
    pub tokens: Vec<u32>,
    /// The n class labels (a + b) mod p.
    pub labels: Vec<u32>,
    /// The n pairs (a, b), in the batch's order.
    pub pairs: Vec<(u32, u32)>,
}

impl Batch {
    /// The sequences `[a, b, =]` of `pairs` for modulus `p`.
    pub fn from_pairs(pairs: Vec<(u32, u32)>, p: usize) -> Self {
        let n = pairs.len();
        let mut tokens = vec![0; SEQ_LEN * n];
        for (i, &(a, b)) in pairs.iter().enumerate() {
            tokens[i] = a;
            tokens[n + i] = b;
            tokens[2 * n + i] = p as u32;
        }
        let labels = pairs
            .iter()
            .map(|&(a, b)| ((a as usize + b as usize) % p) as u32)
            .collect();
        Self {
            n,
            tokens,
            labels,
            pairs,
        }
    }
}

/// The training and validation sets of one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The full-batch training set.
    pub train: Batch,
    /// Every other pair.
    pub val: Batch,
}

/// Splits the p² pairs of `task`: the pairs in order (a major), shuffled by the seed's
/// [`Stream::AttentionSplit`] stream; the first [`TaskConfig::train_count`] train, the rest
/// validate. Each set is then sorted by (a, b), so its order does not depend on the shuffle.
pub fn split(task: &TaskConfig, seed: u64) -> Split {
    let p = task.modulus;
    let mut pairs: Vec<(u32, u32)> = (0..p as u32)
        .flat_map(|a| (0..p as u32).map(move |b| (a, b)))
        .collect();
    pairs.shuffle(&mut stream(seed, Stream::AttentionSplit));
    let mut val = pairs.split_off(task.train_count());
    pairs.sort_unstable();
    val.sort_unstable();
    Split {
        train: Batch::from_pairs(pairs, p),
        val: Batch::from_pairs(val, p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_covers_every_pair_once_with_the_stated_count() {
        let task = TaskConfig::default();
        let s = split(&task, 3);
        assert_eq!(s.train.n, 883);
        assert_eq!(s.val.n, 2209 - 883);
        let mut all: Vec<_> = s.train.pairs.iter().chain(&s.val.pairs).copied().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2209);
        assert_ne!(split(&task, 4).train.pairs, s.train.pairs);
        let i = 5;
        let (a, b) = s.val.pairs[i];
        assert_eq!(s.val.tokens[i], a);
        assert_eq!(s.val.tokens[s.val.n + i], b);
        assert_eq!(s.val.tokens[2 * s.val.n + i], 47);
        assert_eq!(s.val.labels[i], (a + b) % 47);
    }
}
