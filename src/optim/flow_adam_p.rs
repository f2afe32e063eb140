use super::flow_adam::{FlowAdam, FlowClip, P_TITLE};
use super::{Class, Hyper, RuleInfo, Schedule, SensingDefaults};

/// The registry entry of FlowAdam-p (numerics §10; the paper §10): [`FlowAdam`] with the
/// global-norm clip and the dial's denominator at anisotropy p (default 0.5 as the dial's, so
/// that presets read back the same; the paper's FlowAdam-p is p = 0, one shared scale, where the
/// whole rule is equivariant). At p = 1 it is FlowAdam with only the clip repaired.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "flow_adam_p",
    variant: "FlowAdamP",
    title: P_TITLE,
    class: Class::EquivariantAtZero(Hyper::P),
    hypers: &[Hyper::P, Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: Some(Hyper::P),
    lr: 0.01,
    color: [110, 50, 150],
    // The paper runs it at the dial's anchor rate 1e-3 over scalar-Adam's grid.
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-3, 3e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: None,
    build: |s| {
        Box::new(FlowAdam::new(
            FlowClip::GlobalNorm,
            s.p,
            s.beta1,
            s.beta2,
            s.eps,
        ))
    },
};
