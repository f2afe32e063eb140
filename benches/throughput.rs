//! `cargo bench`: the hot loops behind `basis-lab bench`, under criterion. The operation counts
//! and workloads are documented in `basis_lab::bench`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use basis_lab::bench::{
    AttentionWorkload, CompletionWorkload, EpisodeWorkload, NewtonSchulzWorkload, default_at_dk,
    newton_schulz_multiply_adds, paired_run, paired_step_multiply_adds, sensing_multiply_adds,
    sensing_problem, sensing_run, stream_sum, sweep_seconds,
};
use basis_lab::optim::NsForm;

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

fn episodes(c: &mut Criterion) {
    let mut g = c.benchmark_group("episode fwd+bwd");
    for d_k in [16, 64] {
        let mut w = EpisodeWorkload::new(&default_at_dk(d_k));
        g.throughput(Throughput::Elements(2 * w.multiply_adds()));
        g.bench_function(format!("d_k {d_k}"), |b| b.iter(|| black_box(w.run())));
    }
    g.finish();
}

fn paired(c: &mut Criterion) {
    let mut g = c.benchmark_group("paired step, 4 arms");
    for batch in [8, 1] {
        let mut run = paired_run(batch);
        g.throughput(Throughput::Elements(2 * paired_step_multiply_adds(&run)));
        g.bench_function(format!("batch {batch}"), |b| {
            b.iter(|| {
                run.step();
            })
        });
    }
    g.finish();
}

fn sweeps(c: &mut Criterion) {
    let mut g = c.benchmark_group("16-seed sweep, 50 steps");
    g.sample_size(10);
    for threads in [1, 2] {
        g.bench_function(format!("{threads} thread(s)"), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| std::time::Duration::from_secs_f64(sweep_seconds(16, 50, threads)))
                    .sum()
            })
        });
    }
    g.finish();
}

fn sensing(c: &mut Criterion) {
    for n in [40, 128] {
        let problem = sensing_problem(n);
        let mut g = c.benchmark_group(format!("sensing step n {n}"));
        if n == 128 {
            g.sample_size(10);
        }
        let buf: Vec<f64> = (0..problem.m() * n * n).map(|i| (i % 7) as f64).collect();
        g.throughput(Throughput::Bytes(8 * buf.len() as u64));
        g.bench_function("stream the operator's size", |b| {
            b.iter(|| black_box(stream_sum(black_box(&buf))))
        });
        drop(buf);
        g.throughput(Throughput::Elements(
            2 * sensing_multiply_adds(n, problem.m()),
        ));
        for rule in [rule("gd"), rule("adam"), rule("muon"), rule("shampoo")] {
            let mut run = sensing_run(&problem, rule);
            g.bench_function(rule.name(), |b| b.iter(|| run.step()));
        }
        g.finish();
    }
}

fn newton_schulz(c: &mut Criterion) {
    let (t, s) = NewtonSchulzWorkload::SHAPE;
    let mut g = c.benchmark_group(format!("Newton–Schulz {t} × {s}"));
    let mut w = NewtonSchulzWorkload::new();
    for (name, form) in [("direct", NsForm::Direct), ("Gram", NsForm::Gram)] {
        g.throughput(Throughput::Elements(
            2 * newton_schulz_multiply_adds(form, t, s),
        ));
        g.bench_function(name, |b| b.iter(|| black_box(w.run(form))));
    }
    g.finish();
}

fn completion(c: &mut Criterion) {
    let mut g = c.benchmark_group("completion step 2000 × 200");
    for (rule, lr) in [(rule("gd"), 30.0), (rule("muon"), 0.1)] {
        let mut w = CompletionWorkload::new(rule, lr);
        g.bench_function(rule.name(), |b| b.iter(|| black_box(w.step())));
    }
    g.finish();
}

fn attention(c: &mut Criterion) {
    let mut g = c.benchmark_group("attention train step");
    g.sample_size(20);
    let mut w = AttentionWorkload::new();
    g.throughput(Throughput::Elements(2 * w.multiply_adds()));
    g.bench_function("883 sequences, fwd+bwd", |b| b.iter(|| black_box(w.run())));
    g.finish();
}

criterion_group!(
    benches,
    episodes,
    paired,
    sweeps,
    newton_schulz,
    completion,
    sensing,
    attention
);
criterion_main!(benches);
