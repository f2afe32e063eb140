//! Attention twins (the paper's Table 3 and Figure 2): a small transformer trained on addition
//! modulo p as a base model and twins that compute the same function in another basis of each
//! head's query–key space (gauge), the same basis (A = I), or a tiny perturbation away (noise).
//! Headless: nothing here knows about the GUI. The model and its gradient are in [`model`], the
//! task in [`data`], twins, training and metrics in [`twins`], the preset in [`preset`], the
//! output files in [`report`] and the app's figures and tables in [`figures`]; docs/attention.md has the protocol and the measured table.

pub mod data;
pub mod figures;
pub mod live;
pub mod model;
pub mod preset;
pub mod report;
pub mod twins;

pub use data::{Batch, SEQ_LEN, Split, TaskConfig, split};
pub use model::{Arch, Init, ModelConfig, Param, Params, Stats, Workspace};
pub use preset::{AttentionPreset, BUNDLED_ATTENTION, RunSpec, TwinKind};
pub use twins::{
    AttentionResult, Record, SeedResult, SeedRun, make_twin, relative_distance, run_attention,
};
