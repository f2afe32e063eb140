//! The training step allocates nothing once warmed up (the brief: no allocation in the inner
//! step), counted by a global allocator that this test binary installs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use basis_lab::experiment::PairedRun;
use basis_lab::preset::Preset;

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

struct Counting;

thread_local! {
    // Per thread, so tests running in parallel do not count each other's allocations.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    // Set on the threads of a pool whose allocations count together.
    static COUNTED_POOL: Cell<bool> = const { Cell::new(false) };
}

/// Allocations on the threads of pools built by [`counted_pool`] (only one test builds any).
static POOL_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn count() {
    ALLOCATIONS.with(|c| c.set(c.get() + 1));
    if COUNTED_POOL.with(Cell::get) {
        POOL_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

/// A rayon pool of `threads` threads whose allocations all count in [`POOL_ALLOCATIONS`].
fn counted_pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .start_handler(|_| COUNTED_POOL.with(|c| c.set(true)))
        .build()
        .unwrap()
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_paired_step_allocates_nothing_after_warm_up() {
    for batch in [1, 8] {
        let mut p = Preset::load("default").unwrap();
        p.batch = batch;
        p.noise_twins = true;
        let mut run = PairedRun::new(&p).unwrap();
        for _ in 0..3 {
            run.step();
        }
        let before = allocations();
        for _ in 0..200 {
            run.step();
        }
        let during = allocations() - before;
        assert_eq!(
            during, 0,
            "batch {batch}: {during} allocations in 200 steps"
        );
    }
}

#[test]
fn a_sensing_step_allocates_nothing_after_warm_up() {
    use basis_lab::sensing::zoo::FactorRun;
    use basis_lab::sensing::{SensingConfig, SensingProblem};
    let problem = SensingProblem::new(&SensingConfig::default(), 0);
    for rule in [
        rule("gd"),
        rule("adam"),
        rule("scalar_adam"),
        rule("muon"),
        rule("lion"),
        rule("adafactor"),
        rule("adagrad"),
        rule("flow_adam"),
        rule("flow_adam_p"),
    ] {
        let mut run = FactorRun::new(&problem, rule, rule.default_lr(), 1000, 0, true);
        for _ in 0..3 {
            run.step();
        }
        let before = allocations();
        for _ in 0..50 {
            run.step();
        }
        let during = allocations() - before;
        assert_eq!(during, 0, "{rule:?}: {during} allocations in 50 steps");
    }
}

#[test]
fn a_completion_step_allocates_nothing_after_warm_up() {
    use basis_lab::sensing::hsi::{HsiConfig, HsiProblem, HsiWorkspace};
    use nalgebra::DMatrix;
    // U is 200 × 8, long and thin as the real factor (Muon's Gram form); V is 20 × 8 (its
    // direct form).
    let x = DMatrix::from_fn(200, 20, |i, j| ((i * 3 + j) as f64 * 0.3).sin());
    let cfg = HsiConfig {
        width: 8,
        ..HsiConfig::default()
    };
    let problem = HsiProblem::new(x, &cfg).unwrap();
    for rule in [rule("gd"), rule("adam"), rule("scalar_adam"), rule("muon")] {
        let (u, v) = problem.init();
        let mut params = [u, v];
        let mut grads = [DMatrix::zeros(200, 8), DMatrix::zeros(20, 8)];
        let mut ws = HsiWorkspace::new(200, 20, 8);
        let mut opt = rule.build();
        let mut step = |params: &mut [DMatrix<f64>; 2]| {
            let [u, v] = &*params;
            problem.loss_and_grad(u, v, &mut grads, &mut ws);
            opt.step(params, &grads, 1e-3);
        };
        for _ in 0..3 {
            step(&mut params);
        }
        let before = allocations();
        for _ in 0..50 {
            step(&mut params);
        }
        let during = allocations() - before;
        assert_eq!(during, 0, "{rule:?}: {during} allocations in 50 steps");
    }
}

/// At the paper's sizes on two threads, so the products and the column-wise loops are split
/// between them: nothing is allocated on either thread once the first steps have sized the
/// products' packing space.
#[test]
fn an_attention_step_allocates_nothing_after_warm_up_on_two_threads() {
    use basis_lab::attention::{AttentionPreset, Params, Workspace, split};
    use basis_lab::optim::OptimizerSpec;
    let p = AttentionPreset::load("attention").unwrap();
    let arch = p.arch();
    let train = split(&p.task, 0).train;
    counted_pool(2).install(|| {
        let mut params = Params::init(arch, p.init, &mut basis_lab::rng::stream_id(0, 1));
        let mut grads = Params::zeros(arch);
        let mut ws = Workspace::new(arch, train.n, true);
        for name in ["adam", "momentum", "scalar_adam", "muon"] {
            let spec = OptimizerSpec::new(name, 1e-4);
            let mut opt = (spec.info().unwrap().build)(&spec);
            let mut step = |params: &mut Params| {
                ws.forward(params, &train);
                ws.backward(params, &train, &mut grads);
                opt.step(&mut params.mats, &grads.mats, spec.lr);
            };
            for _ in 0..2 {
                step(&mut params);
            }
            let before = POOL_ALLOCATIONS.load(Ordering::Relaxed);
            for _ in 0..3 {
                step(&mut params);
            }
            let during = POOL_ALLOCATIONS.load(Ordering::Relaxed) - before;
            assert_eq!(during, 0, "{name}: {during} allocations in 3 steps");
        }
    });
}

#[test]
fn a_chain_step_allocates_nothing_after_its_first_call() {
    use basis_lab::optim::transforms::TRANSFORMS;
    use basis_lab::optim::{ChainSpec, Optimizer};
    use nalgebra::DMatrix;
    // Every transform but those documented to allocate when they refresh (Shampoo's roots,
    // SOAP's bases: here every 1000 steps, so only at the first call) or by method (SVD).
    let texts: Vec<String> = TRANSFORMS
        .iter()
        .map(|t| match t.name {
            "scale_by_shampoo" | "scale_by_soap" => format!("{}(every=1000)", t.name),
            "scale_by_adam" => "scale_by_adam(p=0.5) | scale_by_adam()".into(),
            name => format!("{name}()"),
        })
        .collect();
    let mut params = [
        DMatrix::from_fn(6, 9, |i, j| ((i * 9 + j) as f64).sin()),
        DMatrix::from_fn(9, 4, |i, j| ((i + 2 * j) as f64).cos()),
    ];
    let grads = [
        DMatrix::from_fn(6, 9, |i, j| ((i + j) as f64 * 0.7).cos()),
        DMatrix::from_fn(9, 4, |i, j| ((i * j) as f64 * 0.3).sin()),
    ];
    for text in texts {
        let mut chain = ChainSpec::parse(&text).unwrap().build();
        chain.step(&mut params, &grads, 1e-3);
        let before = allocations();
        for _ in 0..20 {
            chain.step(&mut params, &grads, 1e-3);
        }
        let during = allocations() - before;
        assert_eq!(during, 0, "{text}: {during} allocations in 20 steps");
    }
}
