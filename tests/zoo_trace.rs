//! `zoo --trace`: a second, plainly written implementation of the sensing loss and of every
//! update rule (nothing from `basis_lab::optim`) replays each traced run from the trace alone
//! and lands on the recorded factors to 1e-9.

// Index loops over (factor, row, column) spell out the formulas as the docs write them.
#![allow(clippy::needless_range_loop)]

use basis_lab::sensing::zoo::{Rule, ZooPreset, check_traceable, trace_zoo};
use nalgebra::DMatrix;
use serde_json::Value;

fn matrix(v: &Value) -> DMatrix<f64> {
    let rows: Vec<Vec<f64>> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect();
    DMatrix::from_fn(rows.len(), rows[0].len(), |i, j| rows[i][j])
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is a number"))
}

/// The loss (1/m)Σ(⟨A_i, UVᵀ⟩ − y_i)² and its gradients M V and Mᵀ U, M = (2/m)Σ r_i A_i.
fn loss_and_grads(
    a: &[DMatrix<f64>],
    y: &[f64],
    u: &DMatrix<f64>,
    v: &DMatrix<f64>,
) -> (f64, [DMatrix<f64>; 2]) {
    let x = u * v.transpose();
    let m = y.len() as f64;
    let mut loss = 0.0;
    let mut g = DMatrix::zeros(x.nrows(), x.ncols());
    for (ai, &yi) in a.iter().zip(y) {
        let r = ai.dot(&x) - yi;
        loss += r * r;
        g += ai * (2.0 * r / m);
    }
    (loss / m, [&g * v, g.transpose() * u])
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Muon's five quintic Newton–Schulz steps on B/(‖B‖F + 1e-7).
fn newton_schulz(b: &DMatrix<f64>) -> DMatrix<f64> {
    let (ca, cb, cc) = (3.4445, -4.7750, 2.0315);
    let mut x = b / (b.norm() + 1e-7);
    for _ in 0..5 {
        let a = &x * x.transpose();
        x = &x * ca + (&a * cb + &a * &a * cc) * &x;
    }
    x
}

/// (S + λI)^(−1/4) through an eigendecomposition, eigenvalues floored at 1e-6.
fn inverse_fourth_root(s: &DMatrix<f64>, lambda: f64) -> DMatrix<f64> {
    let n = s.nrows();
    let e = (s + DMatrix::identity(n, n) * lambda).symmetric_eigen();
    let d = e.eigenvalues.map(|x| x.max(1e-6).powf(-0.25));
    &e.eigenvectors * DMatrix::from_diagonal(&d) * e.eigenvectors.transpose()
}

/// One rule's state, written out plainly from the formulas in docs/numerics.md §2.
struct Plain {
    name: String,
    h: serde_json::Map<String, Value>,
    t: i32,
    m: Vec<DMatrix<f64>>,
    v: Vec<DMatrix<f64>>,
    s: f64,
    row: Vec<Vec<f64>>,
    col: Vec<Vec<f64>>,
    roots: Vec<(DMatrix<f64>, DMatrix<f64>)>,
    /// FlowAdam's step count, running norm and change, previous gradient, and the problem its
    /// flow evaluates.
    k: usize,
    norm_avg: f64,
    change_avg: f64,
    g_prev: [DMatrix<f64>; 2],
    a: Vec<DMatrix<f64>>,
    y: Vec<f64>,
}

impl Plain {
    fn new(cell: &Value, n: usize) -> Self {
        let z = || vec![DMatrix::zeros(n, n), DMatrix::zeros(n, n)];
        Plain {
            name: cell["optimizer"].as_str().unwrap().to_string(),
            h: cell["hypers"].as_object().unwrap().clone(),
            t: 0,
            m: z(),
            v: z(),
            s: 0.0,
            row: vec![vec![0.0; n]; 2],
            col: vec![vec![0.0; n]; 2],
            roots: Vec::new(),
            k: 0,
            norm_avg: 0.0,
            change_avg: 0.0,
            g_prev: [DMatrix::zeros(n, n), DMatrix::zeros(n, n)],
            a: cell["operator"]
                .as_array()
                .unwrap()
                .iter()
                .map(matrix)
                .collect(),
            y: cell["y"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect(),
        }
    }

    /// FlowAdam's trigger (numerics §2, the paper's experiment settings: plateau 0.9, stiffness
    /// 0.1): updates the running norm and change and says whether this step is a flow step.
    fn flow_trigger(&mut self, g: &[DMatrix<f64>; 2]) -> bool {
        let norm = (g[0].norm_squared() + g[1].norm_squared()).sqrt();
        let change = ((&g[0] - &self.g_prev[0]).norm_squared()
            + (&g[1] - &self.g_prev[1]).norm_squared())
        .sqrt();
        if self.k == 0 {
            (self.norm_avg, self.change_avg) = (norm, change);
        } else {
            self.norm_avg = 0.9 * self.norm_avg + 0.1 * norm;
            self.change_avg = 0.9 * self.change_avg + 0.1 * change;
        }
        let flow = (norm < 0.9 * self.norm_avg || change > 0.1 * self.change_avg) && self.k > 10;
        self.g_prev = g.clone();
        self.k += 1;
        flow
    }

    /// `−clip(∇L(at))`: per entry to [−1, 1] for `flow_adam`, by the global norm to 10 for
    /// `flow_adam_p`.
    fn flow_slope(&self, g: &[DMatrix<f64>; 2]) -> [DMatrix<f64>; 2] {
        let mut c = g.clone();
        if self.name == "flow_adam" {
            for x in c.iter_mut().flat_map(|m| m.iter_mut()) {
                *x = x.clamp(-1.0, 1.0);
            }
        } else {
            let norm = (c[0].norm_squared() + c[1].norm_squared()).sqrt();
            if norm > 10.0 {
                c = [&c[0] * (10.0 / norm), &c[1] * (10.0 / norm)];
            }
        }
        [-&c[0], -&c[1]]
    }

    /// FlowAdam's flow step: Dormand–Prince 5(4) over [0, lr/2] at tolerance 1e-4 with the
    /// whole-state error test, then the velocity (displacement over lr) blended into m.
    fn flow(&mut self, p: &mut [DMatrix<f64>; 2], g: &[DMatrix<f64>; 2], lr: f64) {
        const A: [[f64; 6]; 6] = [
            [0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
            [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
            [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
            [
                19372.0 / 6561.0,
                -25360.0 / 2187.0,
                64448.0 / 6561.0,
                -212.0 / 729.0,
                0.0,
                0.0,
            ],
            [
                9017.0 / 3168.0,
                -355.0 / 33.0,
                46732.0 / 5247.0,
                49.0 / 176.0,
                -5103.0 / 18656.0,
                0.0,
            ],
            [
                35.0 / 384.0,
                0.0,
                500.0 / 1113.0,
                125.0 / 192.0,
                -2187.0 / 6784.0,
                11.0 / 84.0,
            ],
        ];
        const E: [f64; 7] = [
            71.0 / 57600.0,
            0.0,
            -71.0 / 16695.0,
            71.0 / 1920.0,
            -17253.0 / 339200.0,
            22.0 / 525.0,
            -1.0 / 40.0,
        ];
        let count = (p[0].len() + p[1].len()) as f64;
        let rms =
            |x: &[DMatrix<f64>; 2]| ((x[0].norm_squared() + x[1].norm_squared()) / count).sqrt();
        let start = p.clone();
        let mut y = p.clone();
        let mut first = self.flow_slope(g);
        let span = 0.5 * lr;
        let (mut t, mut h) = (0.0, span);
        while t < span {
            let last = h >= span - t;
            if last {
                h = span - t;
            }
            let mut ks = vec![first.clone()];
            let mut next = y.clone();
            for row in &A {
                let mut at = y.clone();
                for k in 0..2 {
                    let mut sum = DMatrix::zeros(at[k].nrows(), at[k].ncols());
                    for (w, kj) in row.iter().zip(&ks) {
                        sum += &kj[k] * *w;
                    }
                    at[k] += sum * h;
                }
                let (_, grad) = loss_and_grads(&self.a, &self.y, &at[0], &at[1]);
                ks.push(self.flow_slope(&grad));
                next = at;
            }
            let mut err = [y[0].clone() * 0.0, y[1].clone() * 0.0];
            for k in 0..2 {
                for (e, kj) in E.iter().zip(&ks) {
                    err[k] += &kj[k] * (h * e);
                }
            }
            let ratio = rms(&err) / (1e-4 + 1e-4 * rms(&y).max(rms(&next)));
            if !ratio.is_finite() || ratio <= 1.0 {
                y = next;
                first = ks[6].clone();
                if last || !ratio.is_finite() {
                    break;
                }
                t += h;
                h *= if ratio == 0.0 {
                    10.0
                } else {
                    (0.9 * ratio.powf(-0.2)).clamp(0.2, 10.0)
                };
            } else {
                h *= (0.9 * ratio.powf(-0.2)).max(0.2);
            }
        }
        for k in 0..2 {
            let mut u = (&start[k] - &y[k]) / lr;
            let cap = 5.0 * self.m[k].norm();
            if u.norm() > cap {
                u *= cap / (u.norm() + 1e-8);
            }
            self.m[k] = &self.m[k] * 0.5 + u * 0.5;
        }
        *p = y;
    }

    fn hp(&self, key: &str) -> f64 {
        self.h[key].as_f64().unwrap()
    }

    fn step(&mut self, p: &mut [DMatrix<f64>; 2], g: &[DMatrix<f64>; 2], lr: f64) {
        // A flow step leaves Adam's t and second moment as they were.
        if self.name.starts_with("flow_adam") && self.flow_trigger(g) {
            self.flow(p, g, lr);
            return;
        }
        self.t += 1;
        let t = self.t;
        let each = |f: &mut dyn FnMut(usize, usize, usize)| {
            for k in 0..2 {
                for i in 0..p[k].nrows() {
                    for j in 0..p[k].ncols() {
                        f(k, i, j);
                    }
                }
            }
        };
        let mut d = [p[0].clone() * 0.0, p[1].clone() * 0.0];
        match self.name.as_str() {
            "gd" => each(&mut |k, i, j| d[k][(i, j)] = g[k][(i, j)]),
            "momentum" => {
                let mu = self.hp("momentum");
                each(&mut |k, i, j| {
                    self.m[k][(i, j)] = mu * self.m[k][(i, j)] + g[k][(i, j)];
                    d[k][(i, j)] = self.m[k][(i, j)];
                })
            }
            "sign" => each(&mut |k, i, j| d[k][(i, j)] = sign(g[k][(i, j)])),
            "signum" => {
                let b = self.hp("beta1");
                each(&mut |k, i, j| {
                    self.m[k][(i, j)] = b * self.m[k][(i, j)] + (1.0 - b) * g[k][(i, j)];
                    d[k][(i, j)] = sign(self.m[k][(i, j)]);
                })
            }
            "lion" => {
                let (b1, b2) = (self.hp("beta1"), self.hp("beta2"));
                each(&mut |k, i, j| {
                    let (m, gi) = (self.m[k][(i, j)], g[k][(i, j)]);
                    d[k][(i, j)] = sign(b1 * m + (1.0 - b1) * gi);
                    self.m[k][(i, j)] = b2 * m + (1.0 - b2) * gi;
                })
            }
            "adam" | "dial" | "flow_adam" | "flow_adam_p" => {
                let (b1, b2, eps) = (self.hp("beta1"), self.hp("beta2"), self.hp("eps"));
                let p_dial = if self.name == "dial" || self.name == "flow_adam_p" {
                    self.hp("p")
                } else {
                    1.0
                };
                let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
                let mut total = 0.0;
                each(&mut |k, i, j| {
                    let gi = g[k][(i, j)];
                    self.m[k][(i, j)] = b1 * self.m[k][(i, j)] + (1.0 - b1) * gi;
                    self.v[k][(i, j)] = b2 * self.v[k][(i, j)] + (1.0 - b2) * gi * gi;
                    total += self.v[k][(i, j)] / c2;
                });
                let count = (g[0].len() + g[1].len()) as f64;
                let shared = ((total / count).sqrt() + eps).powf(1.0 - p_dial);
                each(&mut |k, i, j| {
                    let own = ((self.v[k][(i, j)] / c2).sqrt() + eps).powf(p_dial);
                    d[k][(i, j)] = (self.m[k][(i, j)] / c1) / (own * shared);
                })
            }
            "scalar_adam" => {
                let (b1, b2, eps) = (self.hp("beta1"), self.hp("beta2"), self.hp("eps"));
                let count = (g[0].len() + g[1].len()) as f64;
                let mean_sq = (g[0].norm_squared() + g[1].norm_squared()) / count;
                self.s = b2 * self.s + (1.0 - b2) * mean_sq;
                let denom = (self.s / (1.0 - b2.powi(t))).sqrt() + eps;
                let c1 = 1.0 - b1.powi(t);
                each(&mut |k, i, j| {
                    self.m[k][(i, j)] = b1 * self.m[k][(i, j)] + (1.0 - b1) * g[k][(i, j)];
                    d[k][(i, j)] = self.m[k][(i, j)] / (c1 * denom);
                })
            }
            "rmsprop" => {
                let (a, eps) = (self.hp("alpha"), self.hp("eps"));
                each(&mut |k, i, j| {
                    let gi = g[k][(i, j)];
                    self.v[k][(i, j)] = a * self.v[k][(i, j)] + (1.0 - a) * gi * gi;
                    d[k][(i, j)] = gi / (self.v[k][(i, j)].sqrt() + eps);
                })
            }
            "adagrad" => {
                let eps = self.hp("eps");
                each(&mut |k, i, j| {
                    let gi = g[k][(i, j)];
                    self.v[k][(i, j)] += gi * gi;
                    d[k][(i, j)] = gi / (self.v[k][(i, j)].sqrt() + eps);
                })
            }
            "adafactor" => {
                let (b2, eps) = (self.hp("beta2"), self.hp("eps"));
                for k in 0..2 {
                    let (rows, cols) = g[k].shape();
                    for i in 0..rows {
                        let ms = (0..cols).map(|j| g[k][(i, j)].powi(2)).sum::<f64>() / cols as f64;
                        self.row[k][i] = b2 * self.row[k][i] + (1.0 - b2) * ms;
                    }
                    for j in 0..cols {
                        let ms = (0..rows).map(|i| g[k][(i, j)].powi(2)).sum::<f64>() / rows as f64;
                        self.col[k][j] = b2 * self.col[k][j] + (1.0 - b2) * ms;
                    }
                    let r_mean = self.row[k].iter().sum::<f64>() / rows as f64;
                    for i in 0..rows {
                        for j in 0..cols {
                            let v = self.row[k][i] * self.col[k][j] / r_mean;
                            d[k][(i, j)] = g[k][(i, j)] / (v.sqrt() + eps);
                        }
                    }
                }
            }
            "muon" => {
                assert_eq!(self.h["polar"], "NewtonSchulz");
                let mu = self.hp("momentum");
                for k in 0..2 {
                    self.m[k] = &self.m[k] * mu + &g[k];
                    d[k] = newton_schulz(&self.m[k]);
                }
            }
            "shampoo" => {
                let (lambda, every) = (self.hp("damping"), self.hp("root_every") as i32);
                for k in 0..2 {
                    // m: the left statistic Σ g gᵀ, v: the right one Σ gᵀ g.
                    self.m[k] += &g[k] * g[k].transpose();
                    self.v[k] += g[k].transpose() * &g[k];
                }
                if (t - 1) % every == 0 {
                    self.roots = (0..2)
                        .map(|k| {
                            (
                                inverse_fourth_root(&self.m[k], lambda),
                                inverse_fourth_root(&self.v[k], lambda),
                            )
                        })
                        .collect();
                }
                for k in 0..2 {
                    d[k] = &self.roots[k].0 * &g[k] * &self.roots[k].1;
                }
            }
            other => panic!("no plain version of {other}"),
        }
        for k in 0..2 {
            p[k] -= &d[k] * lr;
        }
    }
}

/// Largest entrywise difference relative to the larger entry of `want`.
fn rel(got: &DMatrix<f64>, want: &DMatrix<f64>) -> f64 {
    let scale = want.amax().max(1e-300);
    (got - want).amax() / scale
}

/// Replays `cell` from its trace: the recorded steps one by one, then on to its end by the
/// documented stopping rules. Returns the worst relative difference seen.
fn replay(cell: &Value) -> f64 {
    let a: Vec<DMatrix<f64>> = cell["operator"]
        .as_array()
        .unwrap()
        .iter()
        .map(matrix)
        .collect();
    let y: Vec<f64> = cell["y"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let n = cell["n"].as_u64().unwrap() as usize;
    let (peak, budget) = (num(cell, "lr"), cell["budget"].as_u64().unwrap() as usize);
    let every = cell["check_every"].as_u64().unwrap() as usize;
    let (below, above) = (num(cell, "interpolated_below"), num(cell, "diverged_above"));
    let cosine = match cell["schedule"].as_str().unwrap() {
        "cosine" => true,
        "constant" => false,
        s => panic!("unknown schedule {s}"),
    };
    let full = cell["full_horizon"].as_bool().unwrap();
    let mut p = [matrix(&cell["u0"]), matrix(&cell["v0"])];
    assert_eq!(p[0].shape(), (n, n));
    let mut rule = Plain::new(cell, n);
    let steps = cell["steps"].as_array().unwrap();
    let mut worst: f64 = 0.0;
    let mut t = 0;
    let (outcome, loss) = loop {
        let (loss, g) = loss_and_grads(&a, &y, &p[0], &p[1]);
        if !loss.is_finite() || loss > above {
            break ("Diverged", loss);
        }
        if t >= budget {
            break (
                if full && loss < below {
                    "Interpolated"
                } else {
                    "Budget"
                },
                loss,
            );
        }
        if !full && t % every == 0 && loss < below {
            break ("Interpolated", loss);
        }
        let lr = if cosine {
            peak * 0.5 * (1.0 + (std::f64::consts::PI * t as f64 / budget as f64).cos())
        } else {
            peak
        };
        rule.step(&mut p, &g, lr);
        if let Some(rec) = steps.get(t) {
            assert_eq!(rec["t"].as_u64().unwrap() as usize, t + 1);
            assert!(
                (num(rec, "lr") - lr).abs() <= 1e-15 * peak,
                "lr at step {t}"
            );
            assert!((num(rec, "loss") - loss).abs() <= 1e-9 * loss.abs().max(1e-300));
            worst = worst
                .max(rel(&p[0], &matrix(&rec["u"])))
                .max(rel(&p[1], &matrix(&rec["v"])));
        }
        t += 1;
    };
    let end = &cell["end"];
    assert_eq!(
        end["outcome"].as_str().unwrap(),
        outcome,
        "{}",
        cell["rule"]
    );
    assert_eq!(end["steps"].as_u64().unwrap() as usize, t);
    assert!((num(end, "loss") - loss).abs() <= 1e-9 * loss.abs().max(1e-300));
    worst
        .max(rel(&p[0], &matrix(&end["u"])))
        .max(rel(&p[1], &matrix(&end["v"])))
}

#[test]
fn every_rule_replays_from_its_trace_through_a_plain_implementation() {
    let names: Vec<String> = Rule::all().iter().map(|r| format!("{r:?}")).collect();
    let text = format!(
        "ZooPreset(problem: (n: 6, rank: 1), seeds: 1, seed: 3, budget: 40, rates: [0.01], \
         rules: [{}], schedules: [Paper, CosineFullHorizon], inits: [0.1])",
        names.join(", ")
    );
    let p = ZooPreset::from_ron(&text, "trace.ron").unwrap();
    let trace = trace_zoo(&p).unwrap();
    assert_eq!(trace["schema"], "basis-lab zoo trace 1");
    let cells = trace["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * Rule::all().len());
    let mut seen = Vec::new();
    for cell in cells {
        let name = cell["optimizer"].as_str().unwrap().to_string();
        assert_eq!(cell["steps"].as_array().unwrap().len(), 10, "{name}");
        assert_eq!(cell["operator"].as_array().unwrap().len(), 22);
        let worst = replay(cell);
        assert!(worst <= 1e-9, "{name} ({}): {worst:e}", cell["schedule"]);
        // The run really moved: a replay that did nothing would not match.
        assert!(
            rel(&matrix(&cell["u0"]), &matrix(&cell["end"]["u"])) > 1e-6,
            "{name}"
        );
        seen.push(name);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), Rule::all().len());
    let big = ZooPreset::from_ron("ZooPreset(problem: (n: 8), sizes: [8, 13])", "big.ron").unwrap();
    let e = check_traceable(&big).unwrap_err();
    assert!(
        e.contains("`sizes`") && e.contains("n = 13") && e.contains("n ≤ 12"),
        "{e}"
    );
}

/// The command writes trace.json beside the tables for a small preset, and refuses a large
/// one or a shard before running anything.
#[test]
fn zoo_trace_writes_trace_json_and_refuses_large_problems() {
    let bin = env!("CARGO_BIN_EXE_basis-lab");
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("small.ron");
    std::fs::write(
        &preset,
        "ZooPreset(problem: (n: 5, rank: 1), budget: 30, seeds: 1, rules: [Gd, Muon])",
    )
    .unwrap();
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let out = dir.path().join("out");
    let o = run(&[
        "zoo",
        preset.to_str().unwrap(),
        "--trace",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let trace: Value =
        serde_json::from_slice(&std::fs::read(out.join("trace.json")).unwrap()).unwrap();
    assert_eq!(trace["cells"].as_array().unwrap().len(), 2);
    // The trace's end is the run zoo.csv reports.
    let csv = std::fs::read_to_string(out.join("zoo.csv")).unwrap();
    let steps = trace["cells"][0]["end"]["steps"].as_u64().unwrap();
    assert!(
        csv.lines().nth(1).unwrap().contains(&format!(",{steps},")),
        "{csv}"
    );
    let big = dir.path().join("big");
    let o = run(&[
        "zoo",
        "zoo-paper",
        "--trace",
        "--quiet",
        "--out",
        big.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && e.contains("n = 40") && e.contains("problem.n"),
        "{e}"
    );
    assert!(!big.join("zoo.csv").exists());
    let o = run(&[
        "zoo",
        preset.to_str().unwrap(),
        "--trace",
        "--shard",
        "0/2",
        "--quiet",
        "--out",
        big.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("--shard"), "{e}");
}
